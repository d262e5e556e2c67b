"""What the headset page shows: the robot's camera frames, each with its calibration, and the robot drawn as it is
measured (each part, the arm or the hand, as its URDF's visual geometry draws it where the URDF has some and every
piece of it can be had, else as its body's shapes: the bones and the palm the world simulates; ours carry kinematics
only), the pose commanded ghosted over it, the fingertips, what the hand touches and the thumb-index aperture. The
task's objects only when asked for (a training aid: a real station has no object poses). Everything is in the rig's
base frame (x forward, y left, z up, metres), which the page places in front of the operator facing the way the
operator faces; matrices are row-major lists of 16 numbers. Several rigs (RobotScene): each one's drawing as one rig's,
under "rigs" with its name and its base in the first rig's base frame (the frame of the table and the objects)."""

import base64
import logging
import threading
import time
from collections.abc import Mapping

import numpy as np

from ..geometry.camera import CameraInfo
from ..rig import Rig
from ..robot_body import RigBody
from .link_meshes import indexed, load_link_meshes, simplified

logger = logging.getLogger(__name__)

OTHER_HAND_LINK, ARM_LINK = -1, -2  # a bone's last field: its finger's index, or one of these


def _matrix(pose) -> list[float]:
    return np.round(np.asarray(pose, dtype=float).reshape(16), 6).tolist()


def mirrored(camera: CameraInfo) -> bool:
    """Whether the page shows a camera's image mirrored: a fixed camera that faces the operator (its image's right
    points to the operator's left, the robot's +y) is shown as a mirror, so the robot's hand moves across it the way
    the operator's hand moves. A camera on the robot (the wrist) looks the way the hand points: never."""
    return camera.world_from_camera is not None and camera.world_from_camera[1][0] > 0


def camera_header(name: str, camera: CameraInfo) -> dict:
    """What a camera frame carries to the page besides its image: the calibration a person (or a program) needs to
    read positions off it, and how the page shows it. A stereo pair's frame is both eyes side by side (CameraInfo):
    the page shows each eye its own half; intrinsics and pose are the left eye's."""
    header = {"camera": name, "width": camera.width, "height": camera.height, "mirror": mirrored(camera)}
    if camera.fx is not None:
        header["intrinsics"] = [camera.fx, camera.fy, camera.cx, camera.cy]
    if camera.world_from_camera is not None:
        header["pose"] = _matrix(camera.world_from_camera)
    if camera.mounted_on is not None and camera.part_from_camera is not None:
        header["mount"] = {"part": camera.mounted_on, "pose": _matrix(camera.part_from_camera)}
    if camera.stereo_baseline_m is not None:
        header["stereo"] = {"baseline_m": camera.stereo_baseline_m}
    return header


class HeadsetScene:
    """The body and scene messages of one rig (its body's shapes are derived once, its URDFs' meshes loaded once),
    built on kinematic models of its own: the page's sending thread builds them while the control thread solves the
    arm's IK on the rig's."""

    def __init__(self, rig: Rig):
        parts = {role: part.spec for role, part in rig.parts.items()}
        self.body = RigBody(Rig.from_parts(parts.get("arm"), parts.get("hand"), rig.hand_mount_spec))
        hand = self.body.parts.get("hand")
        self.fingers = list(hand.tips) if hand is not None else []
        self._finger_of_link = hand.finger_links() if hand is not None else {}
        self._body_message: dict | None = None
        self._meshed: list[tuple[str, str]] = []  # (role, link) of each link drawn as its mesh, in body order
        self._loading = threading.Lock()

    def body_message(self) -> dict:
        """The links drawn as their URDF's visual geometry, once per page: {"type": "body", "meshes": [{"role",
        "link", "vertices": base64 float32 (v, 3) in the link's frame, "triangles": base64 uint32 (n, 3)}]}; each
        scene message's measured drawing places them ("meshes": their poses, in this order). Loaded on first call
        (where the view is sent, not in the control loop): reading a vendor's meshes takes a moment."""
        with self._loading:
            if self._body_message is None:
                self._body_message = self._load_meshes()
            return self._body_message

    def _load_meshes(self) -> dict:
        start = time.perf_counter()
        loaded = {(role, link): triangles for role, part in self.body.parts.items()
                  for link, triangles in load_link_meshes(part.part.model.description, part.kept_links).items()}
        meshes = simplified(loaded)
        if meshes:
            logger.info("Headset: %d links drawn from their URDF meshes, %d triangles (%d before simplifying), "
                        "loaded in %.2f s", len(meshes), sum(map(len, meshes.values())),
                        sum(map(len, loaded.values())), time.perf_counter() - start)
        self._meshed = list(meshes)
        entries = []
        for (role, link), triangles in meshes.items():
            vertices, faces = indexed(triangles)
            entries.append({"role": role, "link": link, "vertices": base64.b64encode(vertices.tobytes()).decode(),
                            "triangles": base64.b64encode(faces.tobytes()).decode()})
        return {"type": "body", "meshes": entries}

    def _drawing(self, q_by_role: Mapping[str, np.ndarray], touching: frozenset[str], meshes: bool) -> dict:
        """bones [x0, y0, z0, x1, y1, z1, radius, finger index | OTHER_HAND_LINK | ARM_LINK], the palm box (pose,
        half extents), the fingertips in `fingers` order, and which fingers touch something. With `meshes`: the
        meshed links' poses and whether each touches (the hand's links only: where the world reports contact), and
        no bones or palm box for those links (the palm's "touching" stays)."""
        bones: list[list[float]] = []
        drawing: dict[str, object] = {}
        fingers = {name: i for i, name in enumerate(self.fingers)}
        meshed = self._meshed if meshes else []
        also: dict[str, list[str]] = {}
        for role, link in meshed:
            also.setdefault(role, []).append(link)
        placed = self.body.placed(q_by_role, also)
        for role, (_, links) in placed.items():
            part = self.body.parts[role]
            drawn = set(also.get(role, ()))
            for bone in part.bones:
                if bone.link in drawn:
                    continue
                pose = links[bone.link]
                finger = fingers.get(self._finger_of_link.get(bone.link, ""), OTHER_HAND_LINK) if role == "hand" \
                    else ARM_LINK
                bones.append([*pose[:3, 3], *(pose[:3, :3] @ bone.end_m + pose[:3, 3]), bone.radius_m, finger])
            if part.palm is not None:
                palm_drawing: dict[str, object] = {"touching": part.palm.link in touching}
                drawing["palm"] = palm_drawing
                if part.palm.link not in drawn:  # else its mesh is drawn
                    palm = np.eye(4)
                    palm[:3, :3], palm[:3, 3] = part.palm.rotation, part.palm.centre_m
                    palm_drawing.update(pose=_matrix(links[part.palm.link] @ palm),
                                        half=np.round(part.palm.half_size_m, 5).tolist())
                drawing["tips"] = [np.round((links[link] @ [*offset, 1.0])[:3], 5).tolist()
                                   for link, offset in part.tips.values()]
        drawing["bones"] = np.round(np.array(bones, dtype=float).reshape(-1, 8), 5).tolist()
        drawing["touching"] = [any(self._finger_of_link.get(link) == name for link in touching)
                               for name in self.fingers]
        if meshed:
            drawing["meshes"] = [_matrix(placed[role][1][link]) for role, link in meshed]
            drawing["mesh_touching"] = [role == "hand" and link in touching for role, link in meshed]
        return drawing

    def message(self, measured: Mapping[str, np.ndarray] | None, commanded: Mapping[str, np.ndarray],
                touching: frozenset[str] = frozenset(), objects: Mapping[str, tuple] | None = None,
                table_top_z_m: float | None = None) -> dict:
        """The scene message: the robot measured (with what it touches) and commanded, the fingers' names, the
        thumb-index aperture measured (mm), the table top where the station knows it, and the objects given."""
        self.body_message()  # which links are meshed
        # the command: the body's bones of every link, thin lines through the meshes
        scene: dict = {"type": "scene", "fingers": self.fingers,
                       "commanded": self._drawing(commanded, frozenset(), meshes=False)}
        if measured is not None:
            scene["measured"] = self._drawing(measured, touching, meshes=True)
            tips = dict(zip(self.fingers, scene["measured"].get("tips", []), strict=False))
            if "thumb" in tips and "index" in tips:
                scene["aperture_mm"] = round(1000 * float(np.linalg.norm(np.subtract(tips["thumb"],
                                                                                      tips["index"]))), 1)
        return {**scene, **self.shared(objects, table_top_z_m)}

    @staticmethod
    def shared(objects: Mapping[str, tuple] | None, table_top_z_m: float | None) -> dict:
        """What the scene shows besides the robot: the table top where the station knows it, the objects given."""
        scene: dict = {}
        if table_top_z_m is not None:
            scene["table_z"] = round(table_top_z_m, 5)
        if objects:
            scene["objects"] = [{"name": name, "pose": _matrix(pose), "half": list(half), "centre": list(centre)}
                                for name, (pose, half, centre) in objects.items()]
        return scene


class RobotScene:
    """The body and scene messages of a robot's rigs, by name: one rig's as its HeadsetScene's; several rigs' (a
    teledex_followers robot) under "rigs", each placed by its base in the first rig's base frame."""

    def __init__(self, rigs: Mapping[str, Rig], bases: Mapping[str, np.ndarray]):
        self.scenes = {name: HeadsetScene(rig) for name, rig in rigs.items()}
        self.bases = {name: np.asarray(bases[name]) for name in rigs}

    def body_message(self) -> dict:
        if len(self.scenes) == 1:
            return next(iter(self.scenes.values())).body_message()
        return {"type": "body", "rigs": [{"name": name, "meshes": scene.body_message()["meshes"]}
                                         for name, scene in self.scenes.items()]}

    def message(self, measured: Mapping[str, Mapping[str, np.ndarray] | None],
                commanded: Mapping[str, Mapping[str, np.ndarray]], touching: Mapping[str, frozenset[str]],
                objects: Mapping[str, tuple] | None = None, table_top_z_m: float | None = None) -> dict:
        """Per rig (by name) what HeadsetScene.message takes; the objects and the table in the first rig's frame."""
        if len(self.scenes) == 1:
            [(name, scene)] = self.scenes.items()
            return scene.message(measured[name], commanded[name], touching.get(name, frozenset()), objects,
                                 table_top_z_m)
        rigs = []
        for name, scene in self.scenes.items():
            drawing = scene.message(measured[name], commanded[name], touching.get(name, frozenset()))
            del drawing["type"]
            rigs.append({"name": name, "base": _matrix(self.bases[name]), **drawing})
        return {"type": "scene", "rigs": rigs, **HeadsetScene.shared(objects, table_top_z_m)}
