"""Our WebXR page for headset browsers (Quest, Pico, Vision Pro), served over HTTPS with its WebSocket (WSS) on the
same port.

Headset browsers allow WebXR only on secure pages, so the server speaks TLS with a self-signed certificate made on
first run (the browser warns once; the operator accepts it). `websockets` serves both the page's few static files
(inputs/webxr_page, answered from its opening-handshake hook) and the socket at /ws.

- Headset -> us: one XR state JSON object per XR frame, in the XRoboToolkit schema (xr_state.py), stamped with the
  page's clock (timeStampNs: the browser's time origin plus the XR frame time).
- Us -> headset: {"type": "status", ...} pushed by `publish_status` (state machine state, stale, robot faults), shown
  on the page and on a panel in the headset; and by `publish_view` the robot's camera frames (binary messages:
  FRAME_MAGIC, a little-endian uint32 header length, a JSON header, the JPEG) with the robot's drawing
  ({"type": "scene", ...}, viewer/headset.py), preceded once per page (a reconnected page is a new one) by the
  robot's body: the meshes its scene messages place ({"type": "body", ...}). The newest view replaces one not yet
  sent, the drawing and the JPEG encoding run off the socket's thread (and off the caller's: the drawing is handed
  over as a function), and a page whose link has VIEW_MAX_BUFFERED_BYTES unsent skips views: never a backlog.
- Several pages may be open: tracking belongs to the first page whose message parses as a state, until it
  disconnects or the operator hands it over at the console (`hand_over`); the others are refused (their tracking
  counted in `refused`): they are told so and get nothing of the robot, neither its status nor its cameras. A garbage
  message takes nothing over. The paired page's session key works from the address it was paired from only, and its
  reconnection replaces its old connection.
- view_only: the page served beside another input (the XRoboToolkit app, xrobotoolkit.py) to show the robot; what
  its pages send is ignored and every page sees the view.

Who may connect (the threat model is in docs/inputs.md): the socket checks the Origin header a browser sends
against the page's own origin (https://<Host>), so a page from another site cannot drive the robot or read its
status through the operator's browser. Bound beyond loopback, a socket also needs pairing: a token made at start
(secrets, 128 bits) in the page URL printed in the terminal; the first page that connects with it spends it and gets
a session key for its reconnects; any other is refused. Handing over spends the session and makes a new token.
On loopback (the default) only this machine can connect, and no token is asked for.
"""

import asyncio
import datetime
import hashlib
import io
import ipaddress
import json
import logging
import mimetypes
import secrets
import socket
import ssl
import struct
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Self
from urllib.parse import parse_qs, urlsplit

import cv2
import numpy as np
import qrcode
from websockets.asyncio.server import ServerConnection, broadcast, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from .receiver import InputReceiver
from .senders import LOCAL_BIND, SenderFilter, cannot_listen, describe_listener, is_loopback
from .sources import ThreadedSource

logger = logging.getLogger(__name__)

PAGE_DIR = Path(__file__).parent / "webxr_page"
PORT = 8012  # the page's port unless --teleop.port says (the printed URL names it)
SOCKET_PATH = "/ws"
DEFAULT_CERTIFICATE_DIR = Path("~/.cache/teledex/webxr").expanduser()
CERTIFICATE_DAYS = 365  # Safari refuses server certificates valid for longer than 398 days
MAX_MESSAGE_BYTES = 256 * 1024  # one state with both hands is ~10 KiB
HANDSHAKE_TIMEOUT_S = 60.0
FRAME_MAGIC = b"TDXF"
VIEW_JPEG_QUALITY = 80  # a 640x480 world frame is ~30 KiB
VIEW_MAX_BUFFERED_BYTES = 256 * 1024  # about 8 frames: beyond, the page's link is slower than the camera


def local_addresses(bind: str) -> list[str]:
    """The addresses a browser may use to reach a server bound to `bind` (for the certificate's names)."""
    addresses = {"127.0.0.1"}
    if bind in ("0.0.0.0", ""):
        try:
            addresses.update(str(info[4][0]) for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET))
        except OSError:
            pass
    else:
        addresses.add(bind)
    return sorted(addresses)


def ensure_certificate(directory: Path, addresses: list[str]) -> tuple[Path, Path]:
    """(cert.pem, key.pem) in `directory`: reused while valid for another day and naming every address, else made
    anew (self-signed, ECDSA P-256)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    directory = Path(directory).expanduser()
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    now = datetime.datetime.now(datetime.UTC)
    wanted = {ipaddress.ip_address(a) for a in addresses}
    if cert_path.is_file() and key_path.is_file():
        try:
            existing = x509.load_pem_x509_certificate(cert_path.read_bytes())
            names = existing.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
            if wanted <= set(names.get_values_for_type(x509.IPAddress)) and \
                    existing.not_valid_after_utc - now > datetime.timedelta(days=1):
                return cert_path, key_path
        except (ValueError, x509.ExtensionNotFound):
            pass  # unreadable or foreign: make a new one
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "TeleDex WebXR (self-signed)")])
    alternative_names = [x509.DNSName("localhost"), *(x509.IPAddress(a) for a in sorted(wanted, key=str))]
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                   .serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(minutes=5))
                   .not_valid_after(now + datetime.timedelta(days=CERTIFICATE_DAYS))
                   .add_extension(x509.SubjectAlternativeName(alternative_names), critical=False)
                   .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                   .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
                   .sign(key, hashes.SHA256()))
    directory.mkdir(parents=True, exist_ok=True)
    key_path.touch(mode=0o600)
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    logger.info("Made a self-signed certificate for %s in %s", ", ".join(map(str, sorted(wanted, key=str))),
                directory)
    return cert_path, key_path


def certificate_fingerprint(cert_path: Path) -> str:
    """SHA-256 of the certificate, as browsers show it on their warning page."""
    der = ssl.PEM_cert_to_DER_cert(Path(cert_path).read_text())
    digest = hashlib.sha256(der).hexdigest().upper()
    return ":".join(digest[i:i + 2] for i in range(0, len(digest), 2))


def qr_code(text: str) -> str:
    """`text` as a QR code drawn with block characters, for a terminal (dark on light)."""
    code = qrcode.QRCode(border=2)
    code.add_data(text)
    code.make(fit=True)
    drawn = io.StringIO()
    code.print_ascii(out=drawn, invert=True)
    return drawn.getvalue()


def encode_frames(frames: dict[str, tuple[np.ndarray, dict]]) -> list[tuple[dict, bytes]]:
    """(header, JPEG) of each camera's RGB frame, at the size it was recorded."""
    encoded = []
    for name, (image, header) in frames.items():
        ok, jpeg = cv2.imencode(".jpg", cv2.cvtColor(np.ascontiguousarray(image), cv2.COLOR_RGB2BGR),
                                [cv2.IMWRITE_JPEG_QUALITY, VIEW_JPEG_QUALITY])
        if ok:
            encoded.append(({**header, "camera": name, "width": image.shape[1], "height": image.shape[0]},
                            jpeg.tobytes()))
    return encoded


def _view_messages(scene: Callable[[], dict], body: Callable[[], dict] | None,
                   frames: dict[str, tuple[np.ndarray, dict]]) -> tuple[dict, dict | None, list[tuple[dict, bytes]]]:
    """A view's scene message, its body message (None: no page lacks it) and its encoded frames, made off the event
    loop."""
    return scene(), None if body is None else body(), encode_frames(frames)


def frame_message(header: dict, jpeg: bytes) -> bytes:
    head = json.dumps(header).encode()
    return FRAME_MAGIC + struct.pack("<I", len(head)) + head + jpeg


class WebXRSource(ThreadedSource):
    default_port = PORT
    any_device = False  # the page sends XR states only

    def __init__(self, bind: str = LOCAL_BIND, port: int = PORT, allow: list[str] | tuple[str, ...] = (),
                 certificate_dir: Path | str = DEFAULT_CERTIFICATE_DIR, pairing: bool | None = None,
                 view_only: bool = False, port_flag: str = "--teleop.port"):
        super().__init__()
        # view_only: the page shows the robot beside another input (the XRoboToolkit app); what pages send is ignored
        self.view_only = view_only
        self.bind = bind
        self.senders = SenderFilter(allow)
        # Off loopback the network can reach the socket: a page must be paired (None = decide by the bind address).
        self.pairing = not is_loopback(bind) if pairing is None else pairing
        self._token: str | None = secrets.token_urlsafe(16) if self.pairing else None
        self._session: str | None = None  # the paired page's key for its reconnects
        self._session_host = ""  # the address it was paired from: the key works from there only
        self._paired: dict[ServerConnection, str] = {}  # handshakes that just spent the token -> their session
        self._keyed: set[ServerConnection] = set()  # handshakes that showed the session key: the page reconnecting
        self._holder: ServerConnection | None = None  # the paired page's open connection
        self._pairing_lock = threading.Lock()
        self.unpaired = 0  # socket handshakes refused: a foreign Origin, or no valid token / session
        self.cert_path, key_path = ensure_certificate(Path(certificate_dir), local_addresses(bind))
        self.ssl_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.ssl_context.load_cert_chain(self.cert_path, key_path)
        try:
            self.socket = socket.create_server((bind, port))
        except OSError as error:
            raise cannot_listen(bind, port, error, f"or choose another {port_flag}") from error
        self.address = self.socket.getsockname()
        self.pages = {p.name: p.read_bytes() for p in PAGE_DIR.iterdir() if p.is_file()}
        self.connections = 0
        self._clients: dict[ServerConnection, int] = {}  # connection -> its number (newer = larger)
        self._active: ServerConnection | None = None
        self._status: dict = {}
        self._view: tuple | None = None  # (scene, body, images, published_ns) not yet sent
        self._bodied: set[ServerConnection] = set()  # the pages that have the body message
        self._view_sending = False
        self.views_sent = 0  # views handed to at least one page
        self.views_skipped = 0  # views a page missed because its link still held older ones
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopped: asyncio.Event | None = None

    @classmethod
    def from_config(cls, config, port: int) -> Self:
        return cls(config.bind, port, config.allow, config.certificate_dir)

    @property
    def display(self) -> Self:
        return self

    def describe(self, name: str) -> list[str]:
        return [describe_listener(name, self.bind, self.address[1], self.senders),
                f"  certificate (self-signed; the browser asks once) SHA-256 {certificate_fingerprint(self.cert_path)}",
                self._page_line()]

    def _page_line(self) -> str:
        """Where the headset's browser opens the page; off loopback the URL carries the one-time pairing token,
        shown as a QR code too (the headset's camera or a phone reads it)."""
        where = "a browser, to see the robot's cameras and status" if self.view_only else "the headset's browser"
        if not self.pairing:
            return (f"  open {self.page_url()} in {where} (this machine only: --teleop.bind=<LAN address> for "
                    "another device)")
        hosts = [a for a in local_addresses(self.bind) if a != "127.0.0.1"]
        url = self.page_url(hosts[0] if hosts else "<this computer's address>")
        return (f"  open {url} in {where} (the token pairs one page, once"
                + (f"; other addresses of this computer: {', '.join(hosts[1:])}" if hosts[1:] else "") + ")"
                + (f":\n{qr_code(url)}" if hosts else ""))

    @property
    def url(self) -> str:
        host, port = self.address[:2]
        return f"https://{host}:{port}/"

    def page_url(self, host: str | None = None) -> str:
        """The page's URL at `host` (default: the bind address), with the pairing token while one is unspent."""
        base = self.url if host is None else f"https://{host}:{self.address[1]}/"
        token = self._token
        return base + (f"?token={token}" if token else "")

    @property
    def clients(self) -> int:
        return len(self._clients)

    def diagnostics(self) -> list[str]:
        return [*super().diagnostics(), f"pages={self.clients}", f"unpaired={self.unpaired}"]

    def _run(self, receiver: InputReceiver) -> None:
        asyncio.run(self._serve(receiver))

    async def _serve(self, receiver: InputReceiver) -> None:
        self._loop = asyncio.get_running_loop()
        self._stopped = asyncio.Event()
        if self._stop.is_set():
            return
        # open_timeout: a loaded station can take seconds over a TLS handshake; websockets' 10 s default drops the
        # connection before its response (seen once under two test workers: "did not receive a valid HTTP response")
        async with serve(lambda connection: self._client(connection, receiver), sock=self.socket,
                         ssl=self.ssl_context, process_request=self._http, max_size=MAX_MESSAGE_BYTES,
                         open_timeout=HANDSHAKE_TIMEOUT_S, ping_interval=5, ping_timeout=10, compression=None,
                         logger=logger):
            await self._stopped.wait()

    def stop(self) -> None:
        self._stop.set()
        if self._loop is not None and self._stopped is not None:
            self._loop.call_soon_threadsafe(self._stopped.set)
        super().stop()

    def _close(self) -> None:
        self.socket.close()

    def _http(self, connection: ServerConnection, request: Request) -> Response | None:
        """Every HTTP request: the allow-list, then the socket path (its Origin and pairing checked, the WebSocket
        handshake goes on) or a file."""
        if not self.senders.allows(connection.remote_address[0]):
            return connection.respond(403, "This address may not send input (see --teleop.allow).\n")
        url = urlsplit(request.path)
        if url.path == SOCKET_PATH:
            refusal = self._refusal(connection, request.headers, parse_qs(url.query))
            if refusal is None:
                return None
            self.unpaired += 1
            if self.unpaired == 1 or self.unpaired % 100 == 0:  # a page retries every second
                logger.warning("WebXR: refused a socket from %s (%d so far): %s", connection.remote_address[0],
                               self.unpaired, refusal)
            return connection.respond(403, refusal + "\n")
        path = url.path
        name = "index.html" if path == "/" else path.lstrip("/")
        body = self.pages.get(name)
        if body is None:
            return connection.respond(404, "Not found\n")
        content_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
        if content_type.startswith("text/") or content_type.endswith("javascript"):
            content_type += "; charset=utf-8"
        headers = Headers([("Content-Type", content_type), ("Content-Length", str(len(body))),
                           ("Cache-Control", "no-store")])
        return Response(200, "OK", headers, body)

    def _refusal(self, connection: ServerConnection, headers: Headers, query: dict[str, list[str]]) -> str | None:
        """Why this socket handshake is refused, or None. Browsers always send Origin: a page from elsewhere
        (another site open in the operator's browser) is refused; a client that is no browser sends none."""
        origin, host = headers.get("Origin"), headers.get("Host", "")
        if origin is not None and origin != f"https://{host}":
            return (f"Origin {origin} is not this page's (https://{host}): only the TeleDex page served here may "
                    "connect")
        if not self.pairing:
            return None
        token, session = (query.get(name, [""])[0].encode() for name in ("token", "session"))
        host = connection.remote_address[0]
        with self._pairing_lock:
            if self._session is not None and secrets.compare_digest(session, self._session.encode()):
                if host != self._session_host:  # a key copied off the paired page
                    return (f"This session belongs to the page paired from {self._session_host}: it works from "
                            "there only (press h at the console to hand over and pair another page)")
                self._keyed.add(connection)
                return None
            if self._token is not None and secrets.compare_digest(token, self._token.encode()):
                self._token = None  # one time: it pairs this page only
                self._session = self._paired[connection] = secrets.token_urlsafe(16)
                self._session_host = host
                self._keyed.add(connection)
                logger.info("WebXR: paired the page at %s", host)
                return None
        return ("This page is not paired: open the URL printed in the teleop's terminal (its token pairs one page "
                "once; press h at the console to hand over and get a new one)")

    async def _client(self, connection: ServerConnection, receiver: InputReceiver) -> None:
        self.connections += 1
        self._clients[connection] = self.connections
        host = connection.remote_address[0]
        assert connection.request is not None  # a connection is handed over after its handshake
        logger.info("WebXR page connected from %s (%s)", host, connection.request.headers.get("User-Agent", "?"))
        session = self._paired.pop(connection, None)
        if session is not None:  # the page keeps it for its reconnects (the token in its URL is spent)
            await connection.send(json.dumps({"type": "paired", "session": session}))
        if connection in self._keyed:  # the paired page is back (a reload, a Wi-Fi drop): its old link goes
            self._keyed.discard(connection)
            old, self._holder = self._holder, connection
            if old is not None and old in self._clients:
                if self._active is old:
                    self._active = None
                asyncio.ensure_future(old.close(1000, "replaced by the paired page's new connection"))
        self._send_status(connection)
        try:
            async for message in connection:
                if self.view_only:
                    continue  # another input drives: a page here only watches
                received_ns = self.clock()
                data = message.encode() if isinstance(message, str) else message
                if self._active is connection:
                    receiver.handle(data, received_ns)
                elif self._active is None:
                    if receiver.parses(data):  # only a state takes tracking, never garbage
                        self._active = connection
                        receiver.new_sender(received_ns)
                        logger.info("WebXR: tracking from %s", host)
                        self._broadcast()
                    receiver.handle(data, received_ns)
                else:
                    self._refused_count += 1  # `refused`: tracking messages while another page sends tracking
                    if self._refused_count == 1 or self._refused_count % 1000 == 0:
                        logger.warning("WebXR: refused tracking from %s (%d messages so far): another page sends "
                                       "tracking (press h at the console to hand it over)", host, self._refused_count)
                    self._send_status(connection)
        except ConnectionClosed:
            pass
        finally:
            del self._clients[connection]
            self._bodied.discard(connection)
            if self._active is connection:
                self._active = None
                self._broadcast()
            logger.info("WebXR page at %s disconnected", host)

    def hand_over(self) -> list[str]:
        """Let the page sending tracking go (from the console): its socket is closed, its pairing spent (with
        pairing, a new token: the line returned gives the next operator's URL), and the next page that sends
        takes tracking."""
        with self._pairing_lock:
            self._session = None
            if self.pairing:
                self._token = secrets.token_urlsafe(16)
        if self._loop is not None:
            try:
                self._loop.call_soon_threadsafe(self._release_tracking)
            except RuntimeError:
                pass  # the loop has closed: stopping
        return [self._page_line()] if self.pairing else []

    def _release_tracking(self) -> None:
        active, self._active = self._active, None
        if active is not None:
            logger.warning("WebXR: the page at %s handed over at the console", active.remote_address[0])
            asyncio.ensure_future(active.close(1008, "handed over at the console"))

    def publish_status(self, status: dict) -> None:
        """Push the teleop's status to every open page (thread-safe; never waits for a slow headset)."""
        if self._loop is None:
            return
        self._status = dict(status)
        try:
            self._loop.call_soon_threadsafe(self._broadcast)
        except RuntimeError:
            pass  # the loop has closed: stopping

    def _broadcast(self) -> None:
        for connection in list(self._clients):
            self._send_status(connection)

    def _refused(self, connection: ServerConnection) -> bool:
        """Another page sends tracking: this one may not drive, and sees nothing of the robot."""
        return self._active is not None and connection is not self._active

    def _send_status(self, connection: ServerConnection) -> None:
        if self._refused(connection):  # only that it is refused: neither the robot's state nor its camera
            message = {"type": "status", "refused": True, "tracking": "another page", "pages": len(self._clients)}
            self._bodied.discard(connection)  # the page drops the robot's body too
        else:
            tracking = "none" if self._active is None else "this page"
            message = {"type": "status", **self._status, "tracking": tracking, "pages": len(self._clients),
                       **({"view_only": True} if self.view_only else {})}
        broadcast([connection], json.dumps(message))

    def publish_view(self, scene: Callable[[], dict], frames: dict, published_ns: int,
                     body: Callable[[], dict] | None = None) -> None:
        """The robot's drawing (`scene` makes its message, in the sending thread) and camera frames (name -> (RGB
        array, never changed afterwards; its header: the camera's calibration)) to every page not refused
        (thread-safe; the newest replaces a view not yet sent); `body` makes the message a page gets once, before
        its first scene."""
        if self._loop is None:
            return
        self._view = (scene, body, frames, published_ns)
        try:
            self._loop.call_soon_threadsafe(self._start_sending_views)
        except RuntimeError:
            pass  # the loop has closed: stopping

    def _start_sending_views(self) -> None:
        if not self._view_sending and self._clients:
            self._view_sending = True
            asyncio.ensure_future(self._send_views())

    async def _send_views(self) -> None:
        try:
            while self._view is not None:
                (scene, body, frames, published_ns), self._view = self._view, None
                shown = [c for c in self._clients if not self._refused(c)]
                pages = [c for c in shown if c.transport.get_write_buffer_size() <= VIEW_MAX_BUFFERED_BYTES]
                self.views_skipped += len(shown) - len(pages)
                if not pages:
                    continue
                new = [c for c in pages if c not in self._bodied] if body is not None else []
                message, body_message, encoded = await asyncio.to_thread(
                    _view_messages, scene, body if new else None, frames)
                if body_message:
                    broadcast(new, json.dumps(body_message))
                    self._bodied.update(new)
                # on the wall clock, which the page's performance.timeOrigin shares: the page measures the latency
                published_ms = (published_ns + time.time_ns() - self.clock()) / 1e6
                broadcast(pages, json.dumps({**message, "published_ms": published_ms}))
                for header, jpeg in encoded:
                    broadcast(pages, frame_message({**header, "published_ms": published_ms}, jpeg))
                self.views_sent += 1
        finally:
            self._view_sending = False
