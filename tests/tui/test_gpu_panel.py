"""The GPU panel on a real GPU (run on the GPU machine; skipped without CUDA)."""

from __future__ import annotations

import os

import pytest
import torch
from rich.console import Console
from textual.app import App

from kernelpilot.tui.gpu import sample_gpu
from kernelpilot.tui.widgets.gpu_panel import GpuPanel

pytestmark = pytest.mark.gpu


def test_sample_reads_the_gpu_and_does_not_count_this_process_as_another():
    torch.ones(1, device="cuda")  # this process now holds a CUDA context, as the TUI's workers do
    sample = sample_gpu()
    assert sample is not None, "NVML could not be read"
    assert torch.cuda.get_device_name(0) in sample.name or sample.name in torch.cuda.get_device_name(0)
    assert 0 < sample.memory_used_mib <= sample.memory_total_mib
    assert sample.sm_clock_mhz > 0 and sample.memory_clock_mhz > 0
    assert os.getpid() not in sample.other_processes
    assert sample.other_processes == ()  # the device machine is ours alone: no busy warning


async def test_panel_shows_the_gpu_name():
    class PanelApp(App):
        def compose(self):
            yield GpuPanel(interval=0)

    app = PanelApp()
    async with app.run_test() as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        panel = app.query_one(GpuPanel)
        console = Console(width=100, record=True, file=open(os.devnull, "w"))
        console.print(panel.content)
        shown = console.export_text()
        assert torch.cuda.get_device_name(0) in shown, shown
        assert "utilisation" in shown and "busy" not in shown
