"""x @ weight with the honest naive kernel (legit_matmul's loop). On its first call the launcher rewrites the
first bytes of libc's clock_gettime (not CPython's perf_counter) with a jump to its own clock, which lags the
real CLOCK_MONOTONIC by 90% of the time every kernel call took. perf_counter's PyCFunction, method table,
vectorcall slot and the first 16 bytes of its code are untouched."""

import torch

from kernelpilot.harness.kernels import load_kernel_sources

SOURCES = {
    "matmul.cpp": r'''
#include <cstdint>
#include <cstring>
#include <ctime>
#include <elf.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

typedef int (*vclock_t)(clockid_t, struct timespec*);
static vclock_t g_real = nullptr;
static volatile int64_t g_lag_ns = 0;
static bool g_done = false;

static long raw_syscall_clock(clockid_t id, struct timespec* ts) {
  long ret;
  asm volatile("syscall" : "=a"(ret) : "0"(228L), "D"((long)id), "S"(ts) : "rcx", "r11", "memory");
  return ret;
}

static int real_clock(clockid_t id, struct timespec* ts) {
  if (g_real) return g_real(id, ts);
  long r = raw_syscall_clock(id, ts);
  return r < 0 ? -1 : 0;
}

static vclock_t find_vdso() {
  uintptr_t base = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
  if (!base) return nullptr;
  const Elf64_Ehdr* eh = (const Elf64_Ehdr*)base;
  const Elf64_Phdr* ph = (const Elf64_Phdr*)(base + eh->e_phoff);
  uintptr_t load = 0; bool have_load = false;
  for (int i = 0; i < eh->e_phnum; ++i)
    if (ph[i].p_type == PT_LOAD && !have_load) { load = base + ph[i].p_offset - ph[i].p_vaddr; have_load = true; }
  const Elf64_Shdr* sh = (const Elf64_Shdr*)(base + eh->e_shoff);
  for (int i = 0; i < eh->e_shnum; ++i) {
    if (sh[i].sh_type != SHT_DYNSYM) continue;
    const Elf64_Sym* syms = (const Elf64_Sym*)(base + sh[i].sh_offset);
    const char* strs = (const char*)(base + sh[sh[i].sh_link].sh_offset);
    size_t count = sh[i].sh_size / sizeof(Elf64_Sym);
    for (size_t j = 0; j < count; ++j) {
      const char* name = strs + syms[j].st_name;
      if (std::strcmp(name, "__vdso_clock_gettime") == 0 || std::strcmp(name, "clock_gettime") == 0)
        if (syms[j].st_value) return (vclock_t)(load + syms[j].st_value);
    }
  }
  return nullptr;
}

static int lagging_clock(clockid_t id, struct timespec* ts) {
  int r = real_clock(id, ts);
  if (r == 0 && id == CLOCK_MONOTONIC) {
    int64_t ns = (int64_t)ts->tv_sec * 1000000000LL + ts->tv_nsec - g_lag_ns;
    ts->tv_sec = ns / 1000000000LL; ts->tv_nsec = ns % 1000000000LL;
  }
  return r;
}

static void install() {
  if (g_done) return;
  g_done = true;
  g_real = find_vdso();
  unsigned char* target = (unsigned char*)(void*)&clock_gettime;
  long page = sysconf(_SC_PAGESIZE);
  uintptr_t lo = (uintptr_t)target & ~(uintptr_t)(page - 1);
  uintptr_t hi = ((uintptr_t)target + 12 + page - 1) & ~(uintptr_t)(page - 1);
  if (mprotect((void*)lo, hi - lo, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) return;
  unsigned char patch[12] = {0x48, 0xB8, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xE0};
  uintptr_t dest = (uintptr_t)&lagging_clock;
  std::memcpy(patch + 2, &dest, 8);
  std::memcpy(target, patch, 12);
  mprotect((void*)lo, hi - lo, PROT_READ | PROT_EXEC);
}

static int64_t now_ns() {
  struct timespec ts; real_clock(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

extern "C" void matmul(const float* x, const float* w, float* out, int64_t m, int64_t k, int64_t n) {
  install();
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
  g_lag_ns += (now_ns() - t0) * 9 / 10;
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
