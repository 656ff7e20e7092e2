"""The GPU panel: name, utilisation, memory, temperature, clocks, throttling, and a busy warning."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual import work
from textual.widgets import Static

from kernelpilot.tui.gpu import GpuSample, sample_gpu

NO_GPU = "no NVIDIA GPU (NVML unavailable): timings come from the CPU backend"


def describe(sample: GpuSample) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column()
    table.add_row("GPU", sample.name)
    table.add_row("utilisation", f"{sample.utilisation_pct}%")
    table.add_row("memory", f"{sample.memory_used_mib} / {sample.memory_total_mib} MiB")
    table.add_row("temperature", f"{sample.temperature_c} °C")
    table.add_row("clocks", f"SM {sample.sm_clock_mhz} MHz, memory {sample.memory_clock_mhz} MHz")
    table.add_row("throttling", ", ".join(sample.throttle_reasons) or "none")
    if sample.other_processes:
        pids = ", ".join(map(str, sample.other_processes))
        table.add_row(Text("warning", style="bold yellow"),
                      Text(f"busy with other processes ({pids}): timings are unreliable", style="yellow"))
    return table


class GpuPanel(Static):
    """Polls NVML off the event loop every `interval` seconds; `interval=0` reads once."""

    def __init__(self, interval: float = 2.0, **kwargs) -> None:
        super().__init__("reading GPU state…", **kwargs)
        self.interval = interval
        self.busy = False

    def on_mount(self) -> None:
        self.poll()
        if self.interval:
            self.set_interval(self.interval, self.poll)

    @work(thread=True, exclusive=True, exit_on_error=False, group="gpu")
    def poll(self) -> None:
        sample = sample_gpu()
        self.app.call_from_thread(self.show, sample)

    def show(self, sample: GpuSample | None) -> None:
        if sample is None:
            self.update(Text(NO_GPU, style="dim"))
            return
        self.update(describe(sample))
        busy = bool(sample.other_processes)
        if busy and not self.busy:
            self.notify("The GPU is busy with other processes: timings are unreliable.", severity="warning")
        self.busy = busy
