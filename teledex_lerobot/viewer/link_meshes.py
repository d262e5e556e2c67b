"""A URDF's visual geometry as triangles, for the headset page: each link's <visual> boxes, cylinders, spheres and
mesh files (STL, binary or ASCII, and OBJ) in the link's frame, simplified to what a software-rendered headset can
draw every frame.

Mesh files are found as ROS does without ROS: package://<package>/<path> in a folder <package> in the URDF's folder
or one above it (or the folder of that name the URDF lies in), file://<path>, or a path relative to the URDF. STL is
read here (MuJoCo's decoder refuses ASCII STL and files of over 200k triangles, which CAD exports reach); MuJoCo
(already ours for the world) decodes OBJ, with its polygons and index forms. A visual that cannot be had (a missing
file, another format such as COLLADA .dae) is warned about once, naming the file and the link, and its part (the arm
or the hand) is drawn as the simulated body's shapes instead (robot_body.py): the teleop never stops for a drawing.
"""

import logging
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from urllib.parse import unquote, urlsplit

import numpy as np
from scipy.spatial.transform import Rotation

from ..errors import ModelError
from ..kinematics.urdf import UrdfDescription, VisualSpec

logger = logging.getLogger(__name__)

# Triangles of a whole rig, drawn translucent every frame. The emulated headset (CPU-rendered) drew an arm of 10k at
# about 30 frames/s, of 30k at 13 (its bones: 60); a headset's GPU does not notice them, and a vendor's arm and hand
# (often 100k+ triangles of CAD export) still read as themselves.
MESH_TRIANGLE_BUDGET = 10_000
CYLINDER_SIDES = 16
SPHERE_RINGS, SPHERE_SIDES = 6, 12
MESH_SUFFIXES = (".stl", ".obj")
STL_RECORD = np.dtype([("normal", "<f4", 3), ("corners", "<f4", (3, 3)), ("attribute", "<u2")])  # a binary facet


class MeshUnavailable(ModelError):
    """A visual that cannot be drawn; its message says why and what to do (load_link_meshes warns of it)."""


def resolve_mesh_path(filename: str, urdf_path: Path) -> Path:
    """Where a <mesh filename="..."> lies (it need not exist)."""
    url = urlsplit(filename)
    if url.scheme == "package":
        package, rest = url.netloc, unquote(url.path).lstrip("/")
        for folder in [urdf_path.parent.resolve(), *urdf_path.parent.resolve().parents]:
            if folder.name == package:
                return folder / rest
            if (folder / package).is_dir():
                return folder / package / rest
        raise MeshUnavailable(f"no folder {package!r} (the package of {filename}) in {urdf_path.parent} or a "
                              "folder above it; put the vendor's description package beside the URDF")
    if url.scheme == "file":
        return Path(unquote(url.path))
    return urdf_path.parent / filename


def _stl(data: bytes) -> np.ndarray:
    count = int.from_bytes(data[80:84], "little") if len(data) >= 84 else -1
    if len(data) == 84 + 50 * count:  # binary: its size follows from its count (its header may start with "solid")
        return np.frombuffer(data, STL_RECORD, count, offset=84)["corners"].astype(float)
    numbers = re.findall(rb"vertex\s+(\S+)\s+(\S+)\s+(\S+)", data)
    if not numbers:
        raise MeshUnavailable("neither a binary STL nor an ASCII one with facets")
    return np.array(numbers, dtype=float).reshape(-1, 3, 3)


def read_mesh(path: Path) -> np.ndarray:
    """(n, 3, 3) triangles of an STL or OBJ file, in the file's units."""
    suffix = path.suffix.lower()
    if suffix not in MESH_SUFFIXES:
        raise MeshUnavailable(f"{suffix or 'a file without suffix'} is not a mesh format read here (STL, OBJ); "
                              "convert it to STL or OBJ")
    if not path.is_file():
        raise MeshUnavailable("the file does not exist")
    if suffix == ".stl":
        return _stl(path.read_bytes())
    # here: importing MuJoCo picks its GL backend, which the world's package sets first (MUJOCO_GL=egl)
    import mujoco

    spec = mujoco.MjSpec()
    mesh = spec.add_mesh(name="mesh", file=str(path))
    mesh.inertia = mujoco.mjtMeshInertia.mjMESH_INERTIA_SHELL  # open surfaces too, not only closed volumes
    try:
        model = spec.compile()
    except ValueError as error:
        raise MeshUnavailable(f"MuJoCo cannot read it ({' '.join(str(error).split())})") from None
    # MuJoCo moves the vertices into the mesh's inertial frame: back into the file's
    rotation = Rotation.from_quat(model.mesh_quat[0], scalar_first=True).as_matrix()
    vertices = model.mesh_vert @ rotation.T + model.mesh_pos[0]
    return vertices[model.mesh_face]


def _box(size) -> np.ndarray:
    corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=float) / 2 * size
    faces = [(0, 1, 3), (0, 3, 2), (4, 6, 7), (4, 7, 5), (0, 4, 5), (0, 5, 1),
             (2, 3, 7), (2, 7, 6), (0, 2, 6), (0, 6, 4), (1, 5, 7), (1, 7, 3)]  # outward, counter-clockwise
    return corners[np.array(faces)]


def _cylinder(radius: float, length: float) -> np.ndarray:
    angles = np.linspace(0, 2 * np.pi, CYLINDER_SIDES + 1)
    ring = np.c_[radius * np.cos(angles), radius * np.sin(angles)]
    triangles = []
    for (xa, ya), (xb, yb) in zip(ring[:-1], ring[1:], strict=True):
        low_a, low_b, high_a, high_b = (xa, ya, -length / 2), (xb, yb, -length / 2), (xa, ya, length / 2), \
            (xb, yb, length / 2)
        triangles += [(low_a, low_b, high_b), (low_a, high_b, high_a),
                      ((0, 0, length / 2), high_a, high_b), ((0, 0, -length / 2), low_b, low_a)]
    return np.array(triangles, dtype=float)


def _sphere(radius: float) -> np.ndarray:
    theta = np.linspace(0, np.pi, SPHERE_RINGS + 1)[:, None]
    phi = np.linspace(0, 2 * np.pi, SPHERE_SIDES + 1)[None, :]
    points = radius * np.stack([np.sin(theta) * np.cos(phi), np.sin(theta) * np.sin(phi),
                                np.cos(theta) * np.ones_like(phi)], axis=-1)
    triangles = [(points[r, s], points[r + 1, s], points[r + 1, s + 1]) for r in range(SPHERE_RINGS)
                 for s in range(SPHERE_SIDES)] + [(points[r, s], points[r + 1, s + 1], points[r, s + 1])
                                                 for r in range(SPHERE_RINGS) for s in range(SPHERE_SIDES)]
    return np.array(triangles, dtype=float)


def visual_triangles(visual: VisualSpec, urdf_path: Path, read: dict[Path, np.ndarray]) -> np.ndarray:
    """(n, 3, 3) triangles of one visual in its link's frame (`read`: mesh files already read, by path)."""
    if visual.shape == "mesh":
        path = resolve_mesh_path(visual.filename, urdf_path)
        if path not in read:
            read[path] = read_mesh(path)
        triangles = read[path] * visual.size
        if np.prod(visual.size) < 0:  # a mirroring scale turns the faces inside out: wind them back
            triangles = triangles[:, ::-1]
    elif visual.shape == "box":
        triangles = _box(visual.size)
    elif visual.shape == "cylinder":
        triangles = _cylinder(*visual.size)
    else:
        triangles = _sphere(visual.size[0])
    rotation = Rotation.from_euler("xyz", visual.origin_rpy).as_matrix()
    return triangles @ rotation.T + visual.origin_xyz


def load_link_meshes(description: UrdfDescription, links: Iterable[str] | None = None) -> dict[str, np.ndarray]:
    """Link -> its (n, 3, 3) visual triangles in its frame, for the links (default: all) that have visuals; none at
    all where one of them cannot be had (each warned about, naming the file and the link): a part is drawn whole, as
    its URDF draws it or as the simulated body's shapes, never with a piece missing."""
    wanted = set(description.links if links is None else links)
    urdf_path = Path(description.source)
    read: dict[Path, np.ndarray] = {}
    meshes: dict[str, list[np.ndarray]] = {}
    failed = False
    for visual in description.visuals:
        if visual.link not in wanted:
            continue
        try:
            meshes.setdefault(visual.link, []).append(visual_triangles(visual, urdf_path, read))
        except (OSError, ValueError) as error:  # MeshUnavailable is a ValueError, as is a malformed file's
            failed = True
            logger.warning("URDF %s, link %r: cannot draw its mesh %s: %s. The headset draws %s as the simulated "
                           "body's shapes.", description.source, visual.link, visual.filename, error, description.name)
    return {} if failed else {link: np.concatenate(parts) for link, parts in meshes.items()}


def _key(columns: np.ndarray) -> np.ndarray:
    """Three non-negative integers under 2^21 a row -> one int64 (np.unique on one column is fast)."""
    return (columns[:, 0] << 42) | (columns[:, 1] << 21) | columns[:, 2]


def _clustered(triangles: np.ndarray, cell_m: float) -> np.ndarray:
    """Vertex clustering: the corners in one cell of a grid become their mean; triangles that collapse, and
    repeats, go."""
    corners = triangles.reshape(-1, 3)
    cells = np.floor((corners - corners.min(axis=0)) / cell_m).astype(np.int64)  # under 2^21 a side: simplified()
    _, cluster, counts = np.unique(_key(cells), return_inverse=True, return_counts=True)
    means = np.stack([np.bincount(cluster, corners[:, axis]) for axis in range(3)], axis=1) / counts[:, None]
    ids = cluster.reshape(-1, 3)
    ids = ids[(ids[:, 0] != ids[:, 1]) & (ids[:, 1] != ids[:, 2]) & (ids[:, 2] != ids[:, 0])]
    rows = np.sort(ids, axis=1)
    _, first = np.unique(_key(rows) if len(counts) < 1 << 21 else rows, axis=0, return_index=True)
    return means[ids[np.sort(first)]]


def simplified[K](meshes: Mapping[K, np.ndarray], budget: int = MESH_TRIANGLE_BUDGET) -> dict[K, np.ndarray]:
    """The meshes within `budget` triangles in all: those under an equal cap (the one that spends the budget) as they
    are, each over it clustered on the finest grid that brings it within the cap."""
    cap, left = budget, len(meshes)
    for count in sorted(len(triangles) for triangles in meshes.values()):
        if count > cap // left:
            cap //= left
            break
        cap, left = cap - count, left - 1
    else:
        return dict(meshes)  # all within the budget
    out = {}
    for key, triangles in meshes.items():
        if len(triangles) <= cap:
            out[key] = triangles
            continue
        extent = float(np.ptp(triangles.reshape(-1, 3), axis=0).max())
        # 1000 cells a side hold some 10^6 triangles of a surface: more than any cap
        low, high = np.log(extent * 1e-3), np.log(extent)
        best = candidate = triangles
        for _ in range(12):  # bisect the cell size on a log scale: the finest within the cap
            middle = (low + high) / 2
            candidate = _clustered(triangles, float(np.exp(middle)))
            if len(candidate) <= cap:
                high, best = middle, candidate
            else:
                low = middle
        out[key] = best if len(best) <= cap else candidate
    return out


def indexed(triangles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(vertices (v, 3) float32, triangles (n, 3) uint32): each shared corner sent once."""
    vertices, index = np.unique(triangles.reshape(-1, 3).astype(np.float32), axis=0, return_inverse=True)
    return vertices, index.reshape(-1, 3).astype(np.uint32)
