"""A stand-in for the published XRoboToolkit headset app (XRoboToolkit-Unity-Client), written from its source and
independent of our parser and deframer, for tests and benchmarks.

- TrackingData.Get builds the state: keys in its order (predictTime, appState, Head, Controller, Hand, timeStampNs,
  Input); poses as C# float.ToString("R") "x,y,z,qx,qy,qz,qw"; controller values are C# floats stored in LitJson
  doubles; LitJson writes a double with .NET's general format and appends ".0" to integral values.
- TcpHandler wraps it as {"functionName":"Tracking","value":"<state JSON>"} and PackageHandle.Pack frames it: 0x3F,
  command, the length as long2Bytes(len)[0:4] (little-endian), the body, DateTimeOffset.Now.ToUnixTimeMilliseconds()
  as 8 little-endian bytes (BitConverter), 0xA5.
- On connect it sends 0x19 "<SN>|-1" and 0x6C "<SN>|1.0|<app version>"; a heartbeat 0x23 "<SN>" every 10 s.
- Its discovery listener (UdpReceiver + PackageHandle.Unpack(byte[])) accepts a datagram of >= 15 bytes starting
  with 0xCF whose command 0x7E (PACKET_CMD_TCPIP) carries the PC address as text.
"""

import json
import math
import socket
import struct
import time

import numpy as np

APP_VERSION = "1.0.4"
SERIAL = "PA7L10MGH1234"
OTHER_SERIAL = "PA7L10MGH5678"  # another headset's


def csharp_float(value: float) -> str:
    """C# Single.ToString("R") (.NET Framework / Mono, as Unity ships it): G7, or G9 when G7 does not round-trip."""
    single = np.float32(value)
    text = format(float(single), ".7G")
    if np.float32(float(text)) != single:
        text = format(float(single), ".9G")
    return text


def litjson_double(value: float, single: bool = True) -> str:
    """LitJson JsonWriter.Write(double): general format, ".0" appended if integral; `single`: the value is a C#
    float widened to double (every controller and hand value)."""
    text = format(float(np.float32(value)) if single else float(value), ".15G")
    return text if ("." in text or "E" in text) else text + ".0"


class _Raw(str):
    """A number already formatted (LitJson's text), written as is."""


def litjson(value) -> str:
    """LitJson ToJson: no spaces, keys in insertion order, strings escaped below 0x20 and above 0x7E."""
    if isinstance(value, _Raw):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return litjson_double(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=True)
    if isinstance(value, dict):
        return "{" + ",".join(f"{litjson(str(k))}:{litjson(v)}" for k, v in value.items()) + "}"
    return "[" + ",".join(litjson(v) for v in value) + "]"


def pose_text(position, quaternion_xyzw) -> str:
    return ",".join(csharp_float(v) for v in (*position, *quaternion_xyzw))


def controller(position=(0.0, 0.0, 0.0), quaternion=(0.0, 0.0, 0.0, 0.0), *, trigger=0.0, grip=0.0, axis=(0.0, 0.0),
               axis_click=False, primary=False, secondary=False, menu=False) -> dict:
    """GetControllerJsonData + the pose (Unity XR: x right, y up, z forward in the app's frame as sent)."""
    return {"axisX": axis[0], "axisY": axis[1], "axisClick": axis_click, "grip": float(grip),
            "trigger": float(trigger), "primaryButton": primary, "secondaryButton": secondary, "menuButton": menu,
            "pose": pose_text(position, quaternion)}


def hand(joints_xr: np.ndarray, *, is_active: int = 1, flags=None, radius: float = 0.01) -> dict:
    """GetHandTrackingData: 26 OpenXR joints (positions in the XR frame, identity orientations)."""
    flags = [15] * len(joints_xr) if flags is None else flags
    return {"isActive": is_active, "count": len(joints_xr), "scale": 1.0, "HandJointLocations": [
        # the app's LitJson writes the C# ulong location flags as doubles ("s":15.0)
        {"p": pose_text(p, (0.0, 0.0, 0.0, 1.0)), "s": float(s), "r": radius} for p, s in zip(joints_xr, flags)]}


def tracking_state(timestamp_ns: int, *, head=None, controllers: dict | None = None, hands: dict | None = None,
                   focus: bool = True) -> str:
    """The state JSON as TrackingData.Get writes it (keys present only for the tracking types switched on)."""
    predicted_display_us = timestamp_ns / 1e3 % 1e9  # a double on the headset's display clock, unused by us
    state = {"predictTime": _Raw(litjson_double(predicted_display_us, single=False)), "appState": {"focus": focus}}
    if head is not None:
        state["Head"] = {"pose": pose_text(*head), "status": 3}
    if controllers is not None:
        state["Controller"] = controllers
    if hands is not None:
        state["Hand"] = hands
    state["timeStampNs"] = int(timestamp_ns)
    state["Input"] = 1 if controllers else 2
    return litjson(state)


def pack(command: int, body: bytes, unix_ms: int | None = None) -> bytes:
    """PackageHandle.Pack."""
    unix_ms = int(time.time() * 1000) if unix_ms is None else unix_ms
    length = bytes((len(body) >> (8 * i)) & 0xFF for i in range(8))[:4]  # long2Bytes, first 4 bytes
    return bytes([0x3F, command]) + length + body + struct.pack("<q", unix_ms) + bytes([0xA5])


def tracking_frame(state_json: str, unix_ms: int | None = None) -> bytes:
    """TcpHandler.OnSendThread: the tracking message, command 0x6D (PACKET_CCMD_TO_CONTROLLER_FUNCTION)."""
    wrapper = litjson({"functionName": "Tracking", "value": state_json})
    return pack(0x6D, wrapper.encode("utf-8"), unix_ms)


def hello_frames(serial: str = SERIAL) -> bytes:
    """ConnectInit: connect and version, sent before any tracking; `serial`: the headset's serial number."""
    return pack(0x19, f"{serial}|-1".encode()) + pack(0x6C, f"{serial}|1.0|{APP_VERSION}".encode())


def heartbeat_frame(serial: str = SERIAL) -> bytes:
    return pack(0x23, serial.encode())


def connect(address: tuple[str, int], timeout_s: float = 5.0, source_host: str = "") -> socket.socket:
    """TcpHandler.Connect: a blocking TCP socket with NoDelay, retried while the server is not up yet;
    `source_host`: the headset's address (another loopback address, 127.0.0.2, stands for another device)."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            sock = socket.create_connection(address, timeout=2.0,
                                            source_address=(source_host, 0) if source_host else None)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return sock
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def discovery_listener_accepts(datagram: bytes) -> str | None:
    """PackageHandle.Unpack(byte[]) as UdpReceiver calls it, then UIUdpReceiver's check for PACKET_CMD_TCPIP: the
    address the app would list, or None if it ignores the datagram."""
    if len(datagram) < 15 or datagram[0] != 0xCF:
        return None
    length = struct.unpack_from("<i", datagram, 2)[0]
    body = datagram[6:6 + length] if len(datagram) > 5 + length and length != 0 else None
    if not len(datagram) > 13 + length or datagram[1] != 0x7E or body is None:
        return None
    return body.decode("utf-8")


def reach_path(t_s: float) -> np.ndarray:
    """A right-controller position (XR frame: x right, y up, z backward) drawing a 6 cm circle in front of the
    operator."""
    angle = 2 * math.pi * t_s / 2.0
    return np.array([0.2 + 0.06 * math.cos(angle), 1.0 + 0.06 * math.sin(angle), -0.35])
