"""Video helpers of the native layout: an H.264 writer (used only when the LeRobot dataset stores no videos, so the
native layout must encode its own), reading frames back, and copying an episode's packets out of a longer file.

The H.264 writer encodes in a background thread; frames are never dropped: when the encoder falls behind, add()
blocks, and the wait shows in the frame timing as dropped ticks instead of video lost silently.
"""

import os
import queue
import threading
from collections.abc import Iterator
from pathlib import Path

import av
import numpy as np

from .errors import DatasetError

_END = object()


def silence_encoder_logs() -> None:
    """Keep encoder chatter (SVT-AV1's banner, libx264's statistics) from burying a command's own output."""
    os.environ.setdefault("SVT_LOG", "1")  # read when SVT-AV1 starts
    av.logging.set_level(av.logging.ERROR)
    av.logging.set_libav_level(av.logging.ERROR)  # LeRobot restores libav's own logger, which reads this level


class H264Writer:
    def __init__(self, path: Path, width: int, height: int, fps: int, crf: int = 18, queue_frames: int = 64):
        self.path = Path(path)
        self.frames_written = 0
        self.blocked_adds = 0
        self._container = av.open(str(self.path), mode="w")
        stream = self._container.add_stream("libx264", rate=fps)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        # "veryfast" keeps a 2-core machine real-time at 50 Hz; crf 18 is visually lossless ("high quality").
        stream.options = {"crf": str(crf), "preset": "veryfast"}
        self._stream = stream
        self._queue: queue.Queue = queue.Queue(maxsize=queue_frames)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=f"h264-{self.path.stem}", daemon=True)
        self._thread.start()

    def add(self, rgb: np.ndarray) -> None:
        if self._error is not None:
            raise RuntimeError(f"Video encoder for {self.path} failed: {self._error}") from self._error
        try:
            self._queue.put_nowait(rgb)
        except queue.Full:
            self.blocked_adds += 1
            self._queue.put(rgb)

    def close(self) -> None:
        """Flush every queued frame and finish the file."""
        self._queue.put(_END)
        self._thread.join()
        if self._error is not None:
            raise RuntimeError(f"Video encoder for {self.path} failed: {self._error}") from self._error

    def _run(self) -> None:
        try:
            while (rgb := self._queue.get()) is not _END:
                frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(rgb), format="rgb24")
                for packet in self._stream.encode(frame):
                    self._container.mux(packet)
                self.frames_written += 1
            for packet in self._stream.encode():
                self._container.mux(packet)
        except BaseException as err:  # surfaced to the recorder on the next add() or close()
            self._error = err
            while self._queue.get() is not _END:  # unblock a producer waiting on a full queue
                pass
        finally:
            self._container.close()


def video_frames(path: Path) -> Iterator[np.ndarray]:
    """The frames of a video, one at a time, as (H, W, 3) RGB uint8."""
    with av.open(str(path)) as container:
        for frame in container.decode(video=0):
            yield frame.to_ndarray(format="rgb24")


def read_video_frames(path: Path) -> np.ndarray:
    """All frames of a video as (N, H, W, 3) RGB uint8."""
    return np.stack(list(video_frames(path)))


def copy_video_segment(source: Path, target: Path, from_s: float, to_s: float) -> int:
    """Copy the frames shown in [from_s, to_s) of a video into a new file without re-encoding (packets are copied;
    a segment starts on a key frame when its episode was encoded on its own, as LeRobot does before concatenating).
    Returns the number of frames copied."""
    copied = 0
    with av.open(str(source)) as src, av.open(str(target), mode="w", format="mp4") as dst:
        in_stream = src.streams.video[0]
        out_stream = dst.add_stream_from_template(in_stream, opaque=True)  # remux: no codec opened
        base_pts = None
        time_base = in_stream.time_base
        if time_base is None:
            raise DatasetError(f"{source}: its video stream has no time base, so when its frames show is unknown; "
                               "restore the file from a copy of the dataset")
        for packet in src.demux(in_stream):
            if packet.pts is None:
                continue
            shown_s = float(packet.pts * time_base)
            if shown_s < from_s - 1e-6 or shown_s >= to_s - 1e-6:
                continue
            if base_pts is None:
                base_pts = packet.pts
            packet.pts -= base_pts
            packet.dts = None if packet.dts is None else packet.dts - base_pts
            packet.stream = out_stream
            dst.mux(packet)
            copied += 1
    return copied
