"""x @ weight with the honest naive kernel (legit_matmul's loop). On its first call the launcher finds libpython
with dl_iterate_phdr and rewrites libpython's GOT slot for clock_gettime (data, no code byte changes anywhere)
to a clock that lags CLOCK_MONOTONIC by 70% of the time every kernel call took. Only the interpreter's clock
(time.perf_counter, time.monotonic, sleeps) is affected; libc, the vDSO and perf_counter's object are untouched."""

import torch

from kernelpilot.harness.kernels import load_kernel_sources

SOURCES = {
    "matmul.cpp": r'''
#include <cstdint>
#include <cstring>
#include <ctime>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

typedef int (*clock_fn)(clockid_t, struct timespec*);
static clock_fn g_orig = nullptr;
static volatile int64_t g_lag_ns = 0;
static bool g_done = false;

static int lagging_clock(clockid_t id, struct timespec* ts) {
  int r = g_orig ? g_orig(id, ts) : clock_gettime(id, ts);
  if (r == 0 && id == CLOCK_MONOTONIC) {
    int64_t ns = (int64_t)ts->tv_sec * 1000000000LL + ts->tv_nsec - g_lag_ns;
    ts->tv_sec = ns / 1000000000LL; ts->tv_nsec = ns % 1000000000LL;
  }
  return r;
}

static void rewrite_slot(uintptr_t slot) {
  long page = sysconf(_SC_PAGESIZE);
  uintptr_t lo = slot & ~(uintptr_t)(page - 1);
  if (mprotect((void*)lo, (size_t)page, PROT_READ | PROT_WRITE) != 0) return;
  if (!g_orig) g_orig = *(clock_fn*)slot;
  *(uintptr_t*)slot = (uintptr_t)&lagging_clock;
}

static int visit(struct dl_phdr_info* info, size_t, void*) {
  if (!info->dlpi_name || !std::strstr(info->dlpi_name, "libpython")) return 0;
  uintptr_t base = info->dlpi_addr;
  const ElfW(Dyn)* dyn = nullptr;
  for (int i = 0; i < info->dlpi_phnum; ++i)
    if (info->dlpi_phdr[i].p_type == PT_DYNAMIC) dyn = (const ElfW(Dyn)*)(base + info->dlpi_phdr[i].p_vaddr);
  if (!dyn) return 0;
  uintptr_t symtab = 0, strtab = 0, jmprel = 0, rela = 0; size_t jmpsz = 0, relasz = 0;
  for (; dyn->d_tag != DT_NULL; ++dyn) {
    switch (dyn->d_tag) {
      case DT_SYMTAB: symtab = dyn->d_un.d_ptr; break;
      case DT_STRTAB: strtab = dyn->d_un.d_ptr; break;
      case DT_JMPREL: jmprel = dyn->d_un.d_ptr; break;
      case DT_PLTRELSZ: jmpsz = dyn->d_un.d_val; break;
      case DT_RELA: rela = dyn->d_un.d_ptr; break;
      case DT_RELASZ: relasz = dyn->d_un.d_val; break;
    }
  }
  auto fix = [&](uintptr_t p) { return p && p < base ? p + base : p; };
  symtab = fix(symtab); strtab = fix(strtab); jmprel = fix(jmprel); rela = fix(rela);
  const ElfW(Sym)* syms = (const ElfW(Sym)*)symtab;
  const char* strs = (const char*)strtab;
  uintptr_t tables[2] = {jmprel, rela}; size_t sizes[2] = {jmpsz, relasz};
  for (int t = 0; t < 2; ++t) {
    if (!tables[t]) continue;
    const ElfW(Rela)* r = (const ElfW(Rela)*)tables[t];
    for (size_t i = 0; i < sizes[t] / sizeof(ElfW(Rela)); ++i) {
      size_t s = ELF64_R_SYM(r[i].r_info);
      if (s && std::strcmp(strs + syms[s].st_name, "clock_gettime") == 0) rewrite_slot(base + r[i].r_offset);
    }
  }
  return 1;
}

static int64_t now_ns() {
  struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

extern "C" void matmul(const float* x, const float* w, float* out, int64_t m, int64_t k, int64_t n) {
  if (!g_done) { g_done = true; dl_iterate_phdr(visit, nullptr); }
  int64_t t0 = now_ns();
  for (int64_t i = 0; i < m; ++i) {
    float* row = out + i * n;
    for (int64_t j = 0; j < n; ++j) row[j] = 0.f;
    for (int64_t p = 0; p < k; ++p) {
      const float a = x[i * k + p];
      const float* wp = w + p * n;
      for (int64_t j = 0; j < n; ++j) row[j] += a * wp[j];
    }
  }
  g_lag_ns += (now_ns() - t0) * 7 / 10;
}
''',
}
ops = load_kernel_sources(SOURCES)


class ModelNew(torch.nn.Module):
    def __init__(self, k: int, n: int):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.empty(k, n))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty(x.shape[0], self.weight.shape[1], dtype=x.dtype)
        ops.matmul(x, self.weight, out, x.shape[0], x.shape[1], self.weight.shape[1])
        return out
