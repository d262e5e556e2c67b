"""What the scripted headset person reads off the camera images the page shows (tests/headset_person.py): the cube
halves by their colour, and from each half's top face, a square of known size, its pose through the calibration the
frame carries. Test-only.

- A fixed camera (its pose in the robot's base frame known): the top face's corners back-projected onto the plane
  of the halves' top faces (the table top plus a half's height: a person knows where the table is) give the half's
  position and yaw; a face whose sides do not come out square and of the right size is occluded and not used.
- The wrist camera (its pose on the hand known): the face's corners give the half's pose relative to the camera
  (OpenCV's solvePnP for a square); a fit whose corners reproject more than a pixel off is not used.
Corners are where straight lines fitted to the face's boundary pixels meet, so they are found to a fraction of a
pixel: at 640x480 the top camera puts a half within 1 mm; the wrist camera, 20 cm away at 320x240, within 2-3 mm.
"""

from dataclasses import dataclass

import cv2
import numpy as np

HALF_EDGE_M = 0.04  # the halves: 4 x 4 x 2 cm (the task's instruction)
HALF_HEIGHT_M = 0.02
# OpenCV hue (0-180) ranges: the half to move is red, the one it goes on green; the robot's hand is orange
HUES = {"red": ((0, 7), (168, 180)), "green": ((50, 85),), "orange": ((9, 32),)}
MIN_SATURATION = 70
MIN_FACE_PIXELS = 30
# Lit from above, a top face is brighter than the sides beside it by at least this much (HSV value)
FACE_CONTRAST = 30
SQUARE_TOLERANCE_M = 0.003  # a face seen by a fixed camera: each side within this of the edge
MAX_REPROJECTION_PX = 1.0  # a face seen by the wrist camera
EDGE_SEARCH_PX = 3.0  # how far across a face's rough side its edge is looked for
REFINE_ROUNDS = 4  # at most, each from the last round's corners


@dataclass(frozen=True)
class Camera:
    """A frame as the page shows it, with the calibration its header carries."""

    image: np.ndarray  # RGB
    matrix: np.ndarray  # 3x3 intrinsics
    base_from_camera: np.ndarray | None  # a fixed camera's pose in the robot's base frame
    hand_from_camera: np.ndarray | None  # a camera on the hand: its pose in the hand's base frame
    published_ms: float

    @classmethod
    def from_page(cls, image: np.ndarray, header: dict) -> "Camera":
        fx, fy, cx, cy = header["intrinsics"]
        pose = header.get("pose")
        mount = header.get("mount")
        return cls(image, np.array([[fx, 0, cx], [0, fy, cy], [0, 0, 1.0]]),
                   None if pose is None else np.asarray(pose, dtype=float).reshape(4, 4),
                   None if mount is None else np.asarray(mount["pose"], dtype=float).reshape(4, 4),
                   header["published_ms"])


def colour_mask(image: np.ndarray, colour: str) -> tuple[np.ndarray, np.ndarray]:
    """(pixels of the colour as uint8 0/1, the HSV value channel)."""
    hsv = cv2.cvtColor(image, cv2.COLOR_RGB2HSV)
    hue, saturation = hsv[..., 0], hsv[..., 1]
    mask = np.zeros(hue.shape, dtype=bool)
    for low, high in HUES[colour]:
        mask |= (hue >= low) & (hue < high)
    return (mask & (saturation >= MIN_SATURATION)).astype(np.uint8), hsv[..., 2]


def _largest_blob(mask: np.ndarray) -> np.ndarray | None:
    count, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    if count <= 1:
        return None
    largest = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    if stats[largest, cv2.CC_STAT_AREA] < MIN_FACE_PIXELS:
        return None
    return (labels == largest).astype(np.uint8)


def _top_face(blob: np.ndarray, value: np.ndarray) -> np.ndarray:
    """The brightest face of a half's blob: its top face, lit from above (each face is flat-shaded, the sides at
    least FACE_CONTRAST darker), or all of the blob when only one face shows."""
    brightest = np.percentile(value[blob > 0], 95)
    face = cv2.morphologyEx(((value >= brightest - FACE_CONTRAST / 2) & (blob > 0)).astype(np.uint8),
                            cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    largest = _largest_blob(face)
    return blob if largest is None else largest


def _rough_quadrilateral(contour: np.ndarray) -> np.ndarray | None:
    hull = cv2.convexHull(contour)
    perimeter = cv2.arcLength(hull, True)
    for share in np.linspace(0.01, 0.12, 23):
        corners = cv2.approxPolyDP(hull, share * perimeter, True)
        if len(corners) == 4:
            return corners.reshape(4, 2).astype(float)
        if len(corners) < 4:
            return None
    return None


def _sample(image: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Bilinear samples of a one-channel image at (..., 2) pixel coordinates (x, y)."""
    coordinates = points.reshape(-1, 1, 2).astype(np.float32)
    return cv2.remap(image, coordinates[..., 0], coordinates[..., 1], cv2.INTER_LINEAR).reshape(points.shape[:-1])


def _refined(value: np.ndarray, corners: np.ndarray) -> np.ndarray:
    """Each side located where the brightness changes most across it (to a fraction of a pixel, wherever a threshold
    or the JPEG's blur put the face's boundary pixels), along its middle; the corners where neighbouring sides
    meet."""
    image = value.astype(np.float32)
    centre = corners.mean(axis=0)
    steps = np.arange(-EDGE_SEARCH_PX, EDGE_SEARCH_PX + 1e-9, 0.25)
    sides = []
    for i in range(4):
        start, end = corners[i], corners[(i + 1) % 4]
        along = (end - start) / np.linalg.norm(end - start)
        outward = np.array([-along[1], along[0]])
        if outward @ (start - centre) < 0:
            outward = -outward
        anchors = start[None] + np.linspace(0.2, 0.8, 16)[:, None] * (end - start)[None]
        profiles = _sample(image, anchors[:, None, :] + steps[None, :, None] * outward[None, None, :])
        gradient = np.abs(np.gradient(profiles, axis=1))
        peak = np.clip(np.argmax(gradient, axis=1), 1, len(steps) - 2)
        rows = np.arange(len(peak))
        below, at, above = gradient[rows, peak - 1], gradient[rows, peak], gradient[rows, peak + 1]
        offset = 0.5 * (below - above) / np.where(below - 2 * at + above == 0, -1, below - 2 * at + above)
        edge = anchors + ((steps[peak] + np.clip(offset, -0.5, 0.5) * 0.25)[:, None]) * outward[None]
        vx, vy, x0, y0 = cv2.fitLine(edge.astype(np.float32), cv2.DIST_HUBER, 0, 0.01, 0.01).ravel()
        sides.append((np.array([x0, y0]), np.array([vx, vy])))
    refined = []
    for i in range(4):
        (p, u), (q, v) = sides[i - 1], sides[i]
        try:
            s, _ = np.linalg.solve(np.array([u, -v]).T, q - p)
        except np.linalg.LinAlgError:
            return corners
        refined.append(p + s * u)
    return np.array(refined)


def face_corners(image: np.ndarray, colour: str) -> np.ndarray | None:
    """The four corners (pixels, in order around the face) of the top face of the largest half of that colour."""
    mask, value = colour_mask(image, colour)
    blob = _largest_blob(mask)
    if blob is None:
        return None
    contours, _ = cv2.findContours(_top_face(blob, value), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    contour = max(contours, key=cv2.contourArea)
    corners = _rough_quadrilateral(contour)
    if corners is None:
        return None
    height, width = mask.shape
    if corners.min() < 1 or corners[:, 0].max() > width - 2 or corners[:, 1].max() > height - 2:
        return None  # cut by the image's edge: not the whole face
    # a rough side can lie far enough off the edge that one end's search misses it: refine again from the refined
    for _ in range(REFINE_ROUNDS):
        refined = _refined(value, corners)
        if np.abs(refined - corners).max() < 0.05:
            break
        corners = refined
    return refined


def _yaw_pose(position: np.ndarray, yaw: float) -> np.ndarray:
    pose = np.eye(4)
    pose[:2, :2] = [[np.cos(yaw), -np.sin(yaw)], [np.sin(yaw), np.cos(yaw)]]
    pose[:3, 3] = position
    return pose


def half_on_table(camera: Camera, colour: str, table_top_z_m: float) -> np.ndarray | None:
    """A fixed camera's view of a half lying on the table: its pose (4x4, centre, yaw about z up; a square half's
    yaw is known modulo 90 degrees) in the robot's base frame, or None where its top face is not seen whole."""
    corners = face_corners(camera.image, colour)
    if corners is None:
        return None
    rays = camera.base_from_camera[:3, :3] @ np.linalg.inv(camera.matrix) @ np.vstack([corners.T, np.ones(4)])
    origin = camera.base_from_camera[:3, 3]
    top_z = table_top_z_m + HALF_HEIGHT_M
    on_plane = (origin[:, None] + rays * (top_z - origin[2]) / rays[2]).T
    sides = np.roll(on_plane, -1, axis=0) - on_plane
    diagonals = np.linalg.norm(on_plane[2] - on_plane[0]), np.linalg.norm(on_plane[3] - on_plane[1])
    # a corner off by so much moves a diagonal up to sqrt(2) times as far as a side
    if np.any(np.abs(np.linalg.norm(sides, axis=1) - HALF_EDGE_M) > SQUARE_TOLERANCE_M) or \
            np.any(np.abs(np.array(diagonals) - np.sqrt(2) * HALF_EDGE_M) > np.sqrt(2) * SQUARE_TOLERANCE_M):
        return None
    quarter_turns = np.arctan2(sides[:, 1], sides[:, 0]) % (np.pi / 2)
    yaw = float(np.angle(np.mean(np.exp(4j * quarter_turns)))) / 4
    return _yaw_pose(on_plane.mean(axis=0) - [0.0, 0.0, HALF_HEIGHT_M / 2], yaw)


def half_from_camera(camera: Camera, colour: str) -> np.ndarray | None:
    """A half's pose (4x4: centre, z out of its top face) in the camera's optical frame, from its top face alone,
    or None where the face is not seen whole and sharp."""
    corners = face_corners(camera.image, colour)
    if corners is None:
        return None
    s = HALF_EDGE_M / 2
    square = np.array([[-s, s, 0], [s, s, 0], [s, -s, 0], [-s, -s, 0]])
    best = None
    for ordered in (corners, corners[::-1]):  # IPPE_SQUARE wants the corners in the square's order
        ok, rotation_vector, translation = cv2.solvePnP(square, ordered, camera.matrix, None,
                                                        flags=cv2.SOLVEPNP_IPPE_SQUARE)
        if not ok:
            continue
        rotation = cv2.Rodrigues(rotation_vector)[0]
        if rotation[2, 2] > 0:  # the face's normal must point back at the camera
            continue
        projected = cv2.projectPoints(square, rotation_vector, translation, camera.matrix, None)[0].reshape(4, 2)
        error = float(np.abs(projected - ordered).max())
        if best is None or error < best[0]:
            best = (error, rotation, translation.ravel())
    if best is None or best[0] > MAX_REPROJECTION_PX:
        return None
    _, rotation, translation = best
    pose = np.eye(4)
    pose[:3, :3] = rotation
    pose[:3, 3] = translation - rotation[:, 2] * HALF_HEIGHT_M / 2  # the half's centre, below its top face
    return pose


def nearest_quarter_turn(rotation: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Of a square half's four equal poses (turned about its z by quarter turns), the rotation nearest
    `reference`."""
    turns = [rotation @ np.array([[np.cos(a), -np.sin(a), 0], [np.sin(a), np.cos(a), 0], [0, 0, 1]])
             for a in np.arange(4) * np.pi / 2]
    return max(turns, key=lambda turned: np.trace(turned.T @ reference))
