"""What the judge and its reference keeper share about their pipes, torch-free: the judge starts a keeper
before it has imported torch itself.

Requests and replies are pickled dataclasses, each framed by its pickle's length.
"""

from __future__ import annotations

import pickle
import struct
from dataclasses import dataclass
from typing import BinaryIO

KEEPER_ENTRY = "from kernelpilot.harness.keeper import main; main()"


@dataclass(frozen=True)
class KeeperError:
    """The keeper itself failed: a harness error, never the candidate's."""

    message: str


FRAME_HEADER = struct.Struct("<Q")
"""Each request and reply: its pickle's length, then the pickle."""


def frame(value: object) -> bytes:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    return FRAME_HEADER.pack(len(data)) + data


def read_frame(stream: BinaryIO) -> object:
    header = stream.read(FRAME_HEADER.size)
    if len(header) < FRAME_HEADER.size:
        raise EOFError
    return pickle.loads(stream.read(FRAME_HEADER.unpack(header)[0]))
