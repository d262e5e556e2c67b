"""Operator stream files: recorded or synthetic operator input that a replay device plays back in real time.

Format "teledex-operator-stream/1": one NumPy .npz archive (`numpy.load` reads it without pickle) holding

    key               dtype    shape        meaning
    format            str      ()           "teledex-operator-stream/1"
    kind              str      ()           "keypoints" or "glove_angles"
    side              str      ()           "right" or "left"
    description       str      ()           free text: what the operator does, and when
    timestamps_ns     int64    (N,)         sample times in ns; the first is 0, then strictly increasing
    wrist_pose        float64  (N, 7)       [x, y, z, qx, qy, qz, qw]: pose of the operator's wrist frame in the
                                            operator world frame (x forward, y left, z up; metres; unit quaternion).
                                            Only relative motion matters.
  kind "keypoints":
    hand_keypoints_m  float32  (N, 21, 3)   MediaPipe-21 keypoints in the wrist frame (see hand_model), metres
  kind "glove_angles":
    glove_angles_deg  float32  (N, 24)      UdexReal HandDriver angles in degrees (see glove)

Every value must be finite. A recording with tracking drop-outs keeps only the tracked samples: the timestamps carry
the gap. Readers ignore keys they do not know, so optional keys can be added without a new version; changing the
meaning, dtype or shape of an existing key requires "teledex-operator-stream/2".
"""

import io
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from teledex_lerobot.errors import DataError
from teledex_lerobot.geometry.sides import SIDES
from teledex_lerobot.operator.glove import NUM_GLOVE_ANGLES, glove_to_canonical
from teledex_lerobot.operator.hand_model import angles_from_keypoints
from teledex_lerobot.operator.keypoints import NUM_KEYPOINTS

FORMAT = "teledex-operator-stream/1"
_FORMAT_FAMILY = FORMAT.rsplit("/", 1)[0] + "/"
KINDS = ("keypoints", "glove_angles")
# The per-sample data key of each kind, with its dtype and per-sample shape.
_DATA_KEYS = {
    "keypoints": ("hand_keypoints_m", np.float32, (NUM_KEYPOINTS, 3)),
    "glove_angles": ("glove_angles_deg", np.float32, (NUM_GLOVE_ANGLES,)),
}
_COMMON_KEYS = ("format", "kind", "side", "description", "timestamps_ns", "wrist_pose")
_IN_MEMORY = "OperatorStream"


@dataclass(eq=False)
class OperatorStream:
    """One operator stream (see the module docstring for the meaning of every field)."""

    kind: str
    side: str
    timestamps_ns: np.ndarray
    wrist_pose: np.ndarray
    description: str = ""
    hand_keypoints_m: np.ndarray | None = None
    glove_angles_deg: np.ndarray | None = None

    def __post_init__(self):
        _check_stream(self._arrays(), _IN_MEMORY)

    @classmethod
    def load(cls, path) -> "OperatorStream":
        """Read and validate a stream file; raises DataError naming the file, the key and the fix."""
        path = Path(path)
        fix = "fix: pass an operator stream .npz written by OperatorStream.save or teledex-generate-streams"
        if not path.is_file():
            raise DataError(f"{path}: not a file; {fix} (see configs/streams/)")
        try:
            archive = np.load(path, allow_pickle=False)
        except (OSError, ValueError, EOFError) as error:
            raise DataError(f"{path}: not an .npz archive ({error}); {fix}") from error
        if not isinstance(archive, np.lib.npyio.NpzFile):
            raise DataError(f"{path}: holds a single .npy array, not an .npz archive; {fix}")
        with archive:
            arrays = {key: _read_key(archive, key, path) for key in archive.files}
        _check_stream(arrays, str(path))
        data_key = _DATA_KEYS[arrays["kind"]][0]
        return cls(**{key: arrays[key] for key in _COMMON_KEYS if key != "format"}, **{data_key: arrays[data_key]})

    def save(self, path) -> None:
        """Write the stream to `path` (used as given; .npz recommended). Byte-identical for identical content."""
        _check_stream(self._arrays(), _IN_MEMORY)
        path = Path(path)
        temporary = path.with_name(path.name + ".partial")  # never leave a half-written stream under `path`
        try:
            with zipfile.ZipFile(temporary, "w", compression=zipfile.ZIP_DEFLATED) as archive:
                for key, value in self._arrays().items():
                    # A fixed date keeps regenerated files byte-identical (no spurious diffs in git).
                    info = zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0))
                    info.compress_type = zipfile.ZIP_DEFLATED
                    buffer = io.BytesIO()
                    np.lib.format.write_array(buffer, np.asarray(value), allow_pickle=False)
                    archive.writestr(info, buffer.getvalue())
            os.replace(temporary, path)
        finally:
            temporary.unlink(missing_ok=True)

    def __len__(self) -> int:
        return len(self.timestamps_ns)

    @property
    def duration_s(self) -> float:
        """Time from the first to the last sample."""
        return float(self.timestamps_ns[-1] - self.timestamps_ns[0]) / 1e9

    def index_at(self, elapsed_ns: int) -> int:
        """Index of the last sample at or before `elapsed_ns` since the stream start (the last one past the end)."""
        if elapsed_ns < 0:
            raise ValueError(f"elapsed time must be >= 0 ns, got {elapsed_ns}")
        return int(np.searchsorted(self.timestamps_ns, elapsed_ns, side="right")) - 1

    def bracket(self, elapsed_ns: int) -> tuple[int, int, float]:
        """The samples i, j around `elapsed_ns` and the weight of j for interpolating between them (past the end:
        the last sample, weight 0)."""
        i = self.index_at(elapsed_ns)
        if i + 1 >= len(self.timestamps_ns):
            return i, i, 0.0
        t_i, t_j = self.timestamps_ns[i], self.timestamps_ns[i + 1]
        return i, i + 1, float((elapsed_ns - t_i) / (t_j - t_i))

    def canonical_angles(self) -> np.ndarray:
        """Canonical human hand angles (N, 20) in radians, whatever the kind."""
        if self.kind == "keypoints":
            return angles_from_keypoints(np.asarray(self.hand_keypoints_m, dtype=float), self.side)
        return glove_to_canonical(self.glove_angles_deg, self.side)

    def _arrays(self) -> dict:
        data_key = _DATA_KEYS[self.kind][0] if self.kind in _DATA_KEYS else None
        arrays = {
            "format": FORMAT,
            "kind": self.kind,
            "side": self.side,
            "description": self.description,
            "timestamps_ns": self.timestamps_ns,
            "wrist_pose": self.wrist_pose,
        }
        for key in ("hand_keypoints_m", "glove_angles_deg"):
            value = getattr(self, key)
            if value is not None or key == data_key:
                arrays[key] = value
        return arrays


def _read_key(archive, key: str, path: Path):
    """One array of the archive; 0-d string arrays become str."""
    try:
        value = archive[key]
    except ValueError as error:  # object arrays need pickle, which we never allow
        raise DataError(f"{path}: key '{key}' holds Python objects; fix: store numeric or string arrays") from error
    except (OSError, EOFError, zipfile.BadZipFile) as error:
        raise DataError(f"{path}: key '{key}' is corrupt ({error}); fix: regenerate or re-record the file") from error
    return value.item() if value.ndim == 0 and value.dtype.kind == "U" else value


def _check_stream(arrays: dict, source: str) -> None:
    """Raise DataError '<source>: key '<key>' <problem>; fix: <fix>' for the first problem found."""

    def fail(key, problem, fix):
        raise DataError(f"{source}: key '{key}' {problem}; fix: {fix}")

    for key in ("format", "kind", "side"):
        if key not in arrays:
            fail(key, "is missing", f"a {FORMAT} file needs keys {', '.join(_COMMON_KEYS)} (see stream.py)")
    file_format = arrays["format"]
    if not isinstance(file_format, str) or file_format != FORMAT:
        if isinstance(file_format, str) and file_format.startswith(_FORMAT_FAMILY):
            fail("format", f"is {file_format!r}; this reader supports {FORMAT!r}", "use a matching teledex-lerobot")
        fail("format", f"is {file_format!r}, not an operator stream", f"write files with format {FORMAT!r}")
    for key, allowed in (("kind", KINDS), ("side", SIDES)):
        if not isinstance(arrays[key], str) or arrays[key] not in allowed:
            fail(key, f"is {arrays[key]!r}", f"use one of {allowed}")
    data_key, data_dtype, sample_shape = _DATA_KEYS[arrays["kind"]]
    for key in ("description", "timestamps_ns", "wrist_pose", data_key):
        if arrays.get(key) is None:
            fail(key, "is missing", f"kind {arrays['kind']!r} needs keys {', '.join(_COMMON_KEYS[3:])}, {data_key}")
    if not isinstance(arrays["description"], str):
        fail("description", f"is {type(arrays['description']).__name__}, not a string", "store a str")

    timestamps = arrays["timestamps_ns"]
    _check_array(fail, "timestamps_ns", timestamps, np.int64)
    if timestamps.ndim != 1 or len(timestamps) == 0:
        fail("timestamps_ns", f"has shape {timestamps.shape}, expected (N,) with N >= 1", "store one time per sample")
    if timestamps[0] != 0:
        fail("timestamps_ns", f"starts at {timestamps[0]} ns, not 0", "subtract the first timestamp")
    steps = np.diff(timestamps)
    if (steps <= 0).any():
        i = int(np.argmax(steps <= 0)) + 1
        fail(
            "timestamps_ns",
            f"is not strictly increasing (sample {i} at {timestamps[i]} ns follows {timestamps[i - 1]} ns)",
            "sort the samples and drop duplicates",
        )
    count = len(timestamps)
    _check_array(fail, "wrist_pose", arrays["wrist_pose"], np.float64, (count, 7))
    quaternion_norm = np.linalg.norm(arrays["wrist_pose"][:, 3:], axis=1)
    if (np.abs(quaternion_norm - 1.0) > 1e-3).any():
        i = int(np.argmax(np.abs(quaternion_norm - 1.0) > 1e-3))
        fail("wrist_pose", f"has a non-unit quaternion at sample {i} (norm {quaternion_norm[i]:.4f})", "normalise it")
    _check_array(fail, data_key, arrays[data_key], data_dtype, (count,) + sample_shape)


def _check_array(fail, key: str, value, dtype, shape=None) -> None:
    """Fail on a non-array, wrong dtype, wrong shape (when given) or NaN/inf."""
    if not isinstance(value, np.ndarray):
        fail(key, f"is {type(value).__name__}, not an array", f"store a {np.dtype(dtype).name} array")
    dtype_name = np.dtype(dtype).name
    if value.dtype != dtype:
        fail(key, f"has dtype {value.dtype}, expected {dtype_name}", f"convert with .astype(np.{dtype_name})")
    if shape is not None and value.shape != shape:
        fail(key, f"has shape {value.shape}, expected {shape}", "store one row per timestamp (see stream.py)")
    if value.dtype.kind == "f" and not np.isfinite(value).all():
        sample = int(np.argwhere(~np.isfinite(value))[0][0])
        fail(key, f"contains NaN/inf (first at sample {sample})", "drop or repair those samples")


def interpolate_pose(a: np.ndarray, b: np.ndarray, weight: float) -> np.ndarray:
    """Between two [x, y, z, qx, qy, qz, qw] poses: position linearly, rotation by normalised quaternion lerp
    (close to slerp for the small steps between consecutive samples)."""
    qa, qb = a[3:], b[3:] if np.dot(a[3:], b[3:]) >= 0 else -b[3:]
    q = (1 - weight) * qa + weight * qb
    return np.concatenate([(1 - weight) * a[:3] + weight * b[:3], q / np.linalg.norm(q)])
