"""Open the app on the scripted session (for trying the UI by hand): python tests/tui/demo_scripted.py TASK."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from fixtures import ScriptedSession, script  # noqa: E402

from kernelpilot.tui.app import KernelpilotApp  # noqa: E402

task = Path(sys.argv[1]).resolve()
KernelpilotApp(lambda on_event: ScriptedSession(on_event, script(str(task))), task_path=task).run()
