// TeleDex WebXR sender. Every XR frame it sends the controllers, their buttons and the tracked hands (25 WebXR
// joints) to the teleop over the page's own WSS socket, as one XR state object in XRoboToolkit's schema: poses
// "x,y,z,qx,qy,qz,qw" in the reference space (metres, y up, -z forward), per-joint OpenXR location flags, and
// timeStampNs = the browser's time origin + the frame time, in ns (the sample's time on this headset's clock).
// The teleop pushes back its status (state machine, what the arm does, the grasp, stale input, robot faults) and
// what a real station can show: its cameras' frames (binary: "TDXF", a uint32 header length, a JSON header with the
// camera's calibration, a JPEG) and the robot drawn as measured (its links as its URDF's meshes where the teleop sent
// them in its one "body" message, else its bones and palm; the fingertips, what the hand touches, the thumb-index
// aperture) with the command ghosted. Camera-first: in the headset the cameras are large screens ahead, a camera
// that faces the operator shown as a mirror, a stereo pair's frame (left eye | right eye) each eye its own half; the
// robot is drawn below them, translucent. A robot of several rigs (two arms) comes as "rigs", each with its base in
// the first one's frame: all are drawn, side by side as they stand, and the status has a line per arm.
// Off this computer the socket needs pairing: the URL printed in the teleop's terminal carries a one-time token; the
// teleop answers it with a session key that this tab keeps for its reconnects.
"use strict";

const HAND_JOINTS = [
  "wrist",
  "thumb-metacarpal", "thumb-phalanx-proximal", "thumb-phalanx-distal", "thumb-tip",
  "index-finger-metacarpal", "index-finger-phalanx-proximal", "index-finger-phalanx-intermediate",
  "index-finger-phalanx-distal", "index-finger-tip",
  "middle-finger-metacarpal", "middle-finger-phalanx-proximal", "middle-finger-phalanx-intermediate",
  "middle-finger-phalanx-distal", "middle-finger-tip",
  "ring-finger-metacarpal", "ring-finger-phalanx-proximal", "ring-finger-phalanx-intermediate",
  "ring-finger-phalanx-distal", "ring-finger-tip",
  "pinky-finger-metacarpal", "pinky-finger-phalanx-proximal", "pinky-finger-phalanx-intermediate",
  "pinky-finger-phalanx-distal", "pinky-finger-tip",
];
const FLAGS_TRACKED = 15, FLAGS_INFERRED = 3, FLAGS_NONE = 0; // OpenXR location flags: valid 0x1|0x2, tracked 0x4|0x8
const ZERO_POSE = "0,0,0,0,0,0,0"; // a device without a pose this frame (the teleop leaves it out)
const MAX_BUFFERED_BYTES = 64 * 1024; // never queue old samples behind a slow link: skip frames instead
const PAIRING_HINT = "From another device, open the exact URL the teleop printed: it carries the pairing token.";
const REFUSED = "REFUSED: another page drives the robot; this page shows nothing of it (h at the console hands over)";

const page = { socket: null, connected: false, status: null, session: null, mode: "", sent: 0, scene: null,
  body: null };
// The cameras' frames as they arrive: the newest per camera (its bitmap, header and JPEG bytes), and [arrival,
// latency] in ms of the last 600 (latency from the robot's observation to the decoded frame, on the wall clock both
// machines' pages share).
const view = { frames: {}, stats: [], dirty: {} };
window.teledexView = {
  page, view,
  // a camera's newest frame as shown here: its header and its JPEG, base64 (for a program reading the page)
  frame(name) {
    const frame = view.frames[name];
    if (!frame) return null;
    let text = "";
    for (let i = 0; i < frame.jpeg.length; i += 0x8000) text += String.fromCharCode(...frame.jpeg.subarray(i, i + 0x8000));
    return { header: frame.header, jpeg: btoa(text) };
  },
  // what the headset draws of the scene each frame: vertices in all, those of the URDF's meshes, and the ms placing
  // them took when the scene last changed
  drawn() { return gfx.counts; },
};

// ---------------------------------------------------------------- the socket and the status it brings

function socketUrl() {
  const session = sessionStorage.getItem("teledex-session");
  const token = new URLSearchParams(location.search).get("token");
  const key = session ? ["session", session] : token ? ["token", token] : null;
  const pairing = key ? `${key[0]}=${encodeURIComponent(key[1])}` : "";
  return `wss://${location.host}/ws` + (pairing ? `?${pairing}` : "");
}

function connect() {
  const socket = new WebSocket(socketUrl());
  socket.binaryType = "arraybuffer";
  socket.onopen = () => { page.connected = true; showStatus(); };
  socket.onclose = () => {
    page.connected = false;
    page.socket = null;
    showStatus();
    setTimeout(connect, 1000);
  };
  socket.onmessage = (event) => {
    if (event.data instanceof ArrayBuffer) {
      showFrame(event.data);
      return;
    }
    const message = JSON.parse(event.data);
    if (message.type === "paired") { // the token is spent: reconnect with the session key, and drop the token
      sessionStorage.setItem("teledex-session", message.session);
      history.replaceState(null, "", location.pathname);
    } else if (message.type === "status") {
      page.status = message;
      if (message.refused) dropView();
      showStatus();
    } else if (message.type === "body") { // once per connection, before its first scene
      page.body = (message.rigs || [message]).map(bodyMeshes); // per rig
      gfx.drawn = null;
    } else if (message.type === "scene") {
      page.scene = message;
    }
  };
  page.socket = socket;
}

function dropView() { // refused: nothing of the robot stays on this page
  page.scene = null;
  page.body = null;
  for (const name of Object.keys(view.frames)) {
    view.frames[name].bitmap.close();
    delete view.frames[name];
  }
  document.getElementById("cameras").replaceChildren();
}

// Per camera: up to MAX_DECODING frames decode at once (the browser decodes off the main thread; an emulated headset
// busy drawing lets their results in only between its frames, so one at a time would cap the rate at its frame
// rate). A frame that arrives while all are busy is dropped, and one decoded after a newer one was shown is
// discarded: a page too busy to show every frame shows the newest it can, never an older one after it.
const MAX_DECODING = 3;
const decoding = {};

function showFrame(data) {
  const bytes = new Uint8Array(data);
  if (String.fromCharCode(...bytes.subarray(0, 4)) !== "TDXF") return;
  const length = new DataView(data).getUint32(4, true);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + length)));
  const entry = decoding[header.camera] = decoding[header.camera] || { busy: 0, shown_ms: -Infinity };
  if (entry.busy < MAX_DECODING) decode(entry, header, bytes.slice(8 + length));
}

async function decode(entry, header, jpeg) {
  entry.busy += 1;
  try {
    const bitmap = await createImageBitmap(new Blob([jpeg], { type: "image/jpeg" }));
    // refused meanwhile (nothing of the robot stays), or a newer frame already shown
    if ((page.status && page.status.refused) || header.published_ms <= entry.shown_ms) {
      bitmap.close();
      return;
    }
    entry.shown_ms = header.published_ms;
    const now = performance.timeOrigin + performance.now();
    view.stats.push([now, now - header.published_ms]);
    if (view.stats.length > 600) view.stats.shift();
    const old = view.frames[header.camera];
    if (old) old.bitmap.close();
    view.frames[header.camera] = { bitmap, header, jpeg, arrived: now };
    view.dirty[header.camera] = true;
    showOnPage(header.camera, bitmap, header);
  } finally {
    entry.busy -= 1;
  }
}

// A stereo pair's frame is its two eyes side by side (left | right): what one eye sees is half as wide.
function eyeWidth(bitmap, header) {
  return header.stereo ? bitmap.width / 2 : bitmap.width;
}

// The 2D page: every camera at the size it was recorded (scaled to the page's width), mirrored like in the headset;
// a stereo pair's left eye.
function showOnPage(name, bitmap, header) {
  let figure = document.getElementById(`camera-${name}`);
  if (!figure) {
    figure = document.createElement("figure");
    figure.id = `camera-${name}`;
    figure.append(document.createElement("canvas"), document.createElement("figcaption"));
    document.getElementById("cameras").append(figure);
  }
  const [canvas, caption] = figure.children;
  const width = eyeWidth(bitmap, header);
  figure.style.flexGrow = width;
  figure.style.order = header.mount ? 1 : 0; // the fixed cameras first
  if (page.session) return; // in the headset: the page below is not seen, and drawing it costs the headset's frames
  canvas.width = width;
  canvas.height = bitmap.height;
  canvas.className = header.mirror ? "mirror" : "";
  canvas.getContext("2d").drawImage(bitmap, 0, 0, width, bitmap.height, 0, 0, width, bitmap.height);
  caption.textContent = `${name} ${width}x${bitmap.height}` +
    (header.stereo ? ` (stereo pair, ${Math.round(header.stereo.baseline_m * 1000)} mm: the left eye here, each eye ` +
      "its own in the headset)" : "") + (header.mirror ? " (faces you: shown as a mirror)" : "");
}

// What the operator must know at a glance: following (green), waiting or disengaged (amber), holding on stale
// input, a fault, Emergency or a refused page (red).
function cue() {
  const s = page.status;
  if (!page.connected || !s || s.refused) return "bad";
  if (s.stale || Object.keys(s.faults || {}).length || s.state === "Emergency") return "bad";
  return s.engaged ? "engaged" : "waiting";
}

// The scene's rigs: one robot's own drawing, or each of several ({name, base, ...its drawing}).
function sceneRigs(scene) {
  return scene ? scene.rigs || [scene] : [];
}

// Each hand as measured: the thumb-index aperture and the fingers that touch something (one line per hand of
// several, named).
function handLines() {
  const rigs = sceneRigs(page.scene);
  return rigs.flatMap((rig) => {
    const measured = rig.measured;
    if (!measured) return [];
    const touching = rig.fingers.filter((_, i) => measured.touching[i]);
    if (measured.palm && measured.palm.touching) touching.push("palm");
    const aperture = rig.aperture_mm === undefined ? null : Math.round(rig.aperture_mm);
    const contact = touching.length ? touching.join(", ") : "nothing";
    if (rigs.length === 1) return [...(aperture === null ? [] : [`Aperture: ${aperture} mm`]), `Touching: ${contact}`];
    return [`Hand ${rig.name}: ` + (aperture === null ? "" : `${aperture} mm, `) + `touching ${contact}`];
  });
}

function statusLines() {
  const lines = [page.connected ? "Connected to TeleDex" : "Not connected (retrying)"];
  if (!page.connected) lines.push(PAIRING_HINT);
  const s = page.status;
  if (s && page.connected && s.refused) {
    lines.push(REFUSED);
  } else if (s && page.connected) {
    if (s.view_only) lines.push("View only: the XRoboToolkit app drives the robot");
    if (s.state) lines.push(`State: ${s.state}`);
    if (s.stale !== undefined) lines.push(s.stale ? "Input: STALE - the robot holds (follows again when it returns)" :
      "Input: live");
    if (s.arms) for (const [name, arm] of Object.entries(s.arms)) lines.push(`Arm ${name}: ${arm}`);
    else if (s.arm) lines.push(`Arm: ${s.arm}`);
    if (s.grasp) lines.push(`Grasp: ${s.grasp} (stick press: next)`);
    lines.push(...handLines());
    if (s.episode) lines.push(`Episode ${s.episode}` + (s.episode_left_s == null ? "" : `: ${s.episode_left_s} s left`));
    for (const [part, fault] of Object.entries(s.faults || {})) lines.push(`FAULT ${part}: ${fault}`);
    if (s.takeover) lines.push(`WARNING: ${s.takeover}`);
    if (s.buttons) lines.push("Buttons: " + Object.entries(s.buttons).map(([b, key]) => `${b} ${key}`).join(", "));
  }
  if (page.session) lines.push(`In ${page.mode}, ${page.sent} samples sent`);
  return lines;
}

function showStatus() {
  const lines = statusLines();
  const box = document.getElementById("status");
  box.textContent = lines.join("\n");
  box.className = cue();
  panel.dirty = true;
  if (page.status && page.status.view_only) { // another input drives: nothing to enter
    for (const id of ["enter-vr", "enter-ar"]) document.getElementById(id).hidden = true;
  }
}

// ---------------------------------------------------------------- one XR frame -> one XR state message

function poseText(transform) {
  const p = transform.position, o = transform.orientation;
  return `${p.x},${p.y},${p.z},${o.x},${o.y},${o.z},${o.w}`;
}

function controllerState(frame, source, space) {
  const gamepad = source.gamepad;
  const pose = frame.getPose(source.gripSpace || source.targetRaySpace, space);
  const button = (i) => gamepad.buttons[i] || { value: 0, pressed: false };
  // xr-standard gamepad mapping: 0 trigger, 1 squeeze, 3 thumbstick press, 4 A/X, 5 B/Y; axes 2, 3 thumbstick
  // (y down-positive there, up-positive in XRoboToolkit's schema). The menu button is kept by the browser.
  return {
    pose: pose ? poseText(pose.transform) : ZERO_POSE,
    trigger: button(0).value, grip: button(1).value,
    axisX: gamepad.axes.length > 3 ? gamepad.axes[2] : 0, axisY: gamepad.axes.length > 3 ? -gamepad.axes[3] : 0,
    axisClick: button(3).pressed, primaryButton: button(4).pressed, secondaryButton: button(5).pressed,
    menuButton: false,
  };
}

function handState(frame, source, space) {
  const locations = HAND_JOINTS.map((name) => {
    const joint = source.hand.get(name);
    const pose = joint ? frame.getJointPose(joint, space) : null;
    if (!pose) return { p: ZERO_POSE, s: FLAGS_NONE, r: 0 };
    return { p: poseText(pose.transform), s: pose.emulatedPosition ? FLAGS_INFERRED : FLAGS_TRACKED, r: pose.radius };
  });
  return { isActive: 1, count: HAND_JOINTS.length, scale: 1.0, HandJointLocations: locations };
}

function xrState(time, frame, space, viewer) {
  const state = {
    predictTime: 0, appState: { focus: page.session.visibilityState === "visible" },
    timeStampNs: Math.round((performance.timeOrigin + time) * 1e6), Input: 0, Controller: {}, Hand: {},
  };
  if (viewer) state.Head = { pose: poseText(viewer.transform), status: viewer.emulatedPosition ? 1 : 3 };
  for (const source of page.session.inputSources) {
    if (source.handedness !== "left" && source.handedness !== "right") continue;
    if (source.hand) state.Hand[`${source.handedness}Hand`] = handState(frame, source, space);
    else if (source.gamepad) state.Controller[source.handedness] = controllerState(frame, source, space);
  }
  return state;
}

// ---------------------------------------------------------------- drawing in the headset (WebGL 1)

// Placements, from where the operator's head was when the session began (its position and heading; metres, y up,
// -z ahead). The cameras hang ahead as large screens: the first fixed camera straight ahead, the others (the wrist)
// to its right, turned toward the operator. The robot's base frame (x forward, y left, z up) sits below them at a
// table's height, facing the way the operator faces, so the drawn hand moves the way the controller does. The status
// panel follows the head.
const MAIN_SCREEN = { centre: [0, -0.05, -1.3], width: 1.2 }; // about 50 degrees wide
const SIDE_SCREEN = { centre: [0.95, -0.35, -1.0], width: 0.62, turn: -0.75 }; // turned toward the operator (rad)
const ROBOT_FROM_HEAD = [0, -0.7, -0.55];
const PANEL_FROM_HEAD = new Float32Array([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, -0.3, -0.3, -0.8, 1]); // low left
const PANEL_HALF = [0.26, 0.13];
const ARM_BONE = -2; // a bone's last field: its finger's index, -1 another hand link, ARM_BONE the arm's
const GHOST_RADIUS = 0.005; // the command: thin lines through the robot, seen where the robot lags behind
const TIP_RADIUS = 0.011;
const TABLE_HALF = [0.3, 0.4], TABLE_CENTRE_X = 0.4; // the workspace, in the robot's base frame
const COLOURS = {
  arm: [0.7, 0.74, 0.8, 0.3], // translucent: it must not hide the workspace
  hand: [0.95, 0.6, 0.3, 0.75], ghost: [0.3, 0.95, 0.5, 0.6], table: [0.22, 0.24, 0.3, 0.6],
  touching: [1.0, 0.15, 0.1, 0.95], aperture: [1, 1, 1, 0.9],
  // fingertips, thumb first: each its own colour, so the eye finds them in the drawing
  tips: [[1, 0.9, 0.1, 1], [0.1, 0.85, 1, 1], [0.75, 0.35, 1, 1], [0.3, 1, 0.4, 1], [1, 0.45, 0.75, 1]],
  objects: [[0.9, 0.3, 0.3, 0.8], [0.3, 0.8, 0.4, 0.8], [0.3, 0.6, 0.95, 0.8], [0.6, 0.45, 0.3, 0.8]],
};
const CUE_COLOURS = { engaged: "rgba(20, 90, 40, 0.9)", waiting: "rgba(120, 90, 10, 0.9)",
  bad: "rgba(130, 20, 20, 0.92)" };

const gfx = { quad: null, solid: null, meshes: {}, panel: null, screens: {}, anchor: null, drawn: null, batches: [],
  batchBuffers: [], counts: null };
const panel = { dirty: true };

// A program and the locations of its attributes and uniforms (looked up once: each lookup can cost a round trip)
function program(gl, vertex, fragment, attributes, uniforms) {
  const shader = (type, source) => {
    const s = gl.createShader(type);
    gl.shaderSource(s, source);
    gl.compileShader(s);
    return s;
  };
  const p = gl.createProgram();
  gl.attachShader(p, shader(gl.VERTEX_SHADER, vertex));
  gl.attachShader(p, shader(gl.FRAGMENT_SHADER, fragment));
  gl.linkProgram(p);
  return { program: p, a: Object.fromEntries(attributes.map((name) => [name, gl.getAttribLocation(p, name)])),
    u: Object.fromEntries(uniforms.map((name) => [name, gl.getUniformLocation(p, name)])) };
}

function texture(gl) {
  const t = gl.createTexture();
  gl.bindTexture(gl.TEXTURE_2D, t);
  gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.LINEAR);
  gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_S, gl.CLAMP_TO_EDGE);
  gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_T, gl.CLAMP_TO_EDGE);
  return t;
}


function boxVertices() { // the cube [-1, 1]^3
  const vertices = [];
  for (const [axis, sign] of [[0, 1], [0, -1], [1, 1], [1, -1], [2, 1], [2, -1]]) {
    const u = (axis + 1) % 3, v = (axis + 2) % 3;
    const corner = (a, b) => {
      const p = [0, 0, 0], n = [0, 0, 0];
      p[axis] = sign; p[u] = a; p[v] = b * sign; n[axis] = sign;
      vertices.push(...p, ...n);
    };
    corner(-1, -1); corner(1, -1); corner(1, 1); corner(-1, -1); corner(1, 1); corner(-1, 1);
  }
  return vertices;
}

function cylinderVertices(sides) { // radius 1, z from -1 to 1, no caps (spheres close a capsule)
  const vertices = [];
  for (let i = 0; i < sides; i++) {
    const a = (2 * Math.PI * i) / sides, b = (2 * Math.PI * (i + 1)) / sides;
    const [ca, sa, cb, sb] = [Math.cos(a), Math.sin(a), Math.cos(b), Math.sin(b)];
    vertices.push(ca, sa, -1, ca, sa, 0, cb, sb, -1, cb, sb, 0, cb, sb, 1, cb, sb, 0);
    vertices.push(ca, sa, -1, ca, sa, 0, cb, sb, 1, cb, sb, 0, ca, sa, 1, ca, sa, 0);
  }
  return vertices;
}

function sphereVertices(rings, sides) { // radius 1
  const point = (r, s) => {
    const theta = (Math.PI * r) / rings, phi = (2 * Math.PI * s) / sides;
    const p = [Math.sin(theta) * Math.cos(phi), Math.sin(theta) * Math.sin(phi), Math.cos(theta)];
    return [...p, ...p];
  };
  const vertices = [];
  for (let r = 0; r < rings; r++) {
    for (let s = 0; s < sides; s++) {
      vertices.push(...point(r, s), ...point(r + 1, s), ...point(r + 1, s + 1));
      vertices.push(...point(r, s), ...point(r + 1, s + 1), ...point(r, s + 1));
    }
  }
  return vertices;
}

function setUpDrawing(gl) {
  // crop: the share of the image's width shown and where it starts (a stereo frame's one eye: 0.5, then 0 or 0.5)
  gfx.quad = program(gl,
    "attribute vec3 position; uniform mat4 mvp; uniform float mirror; uniform vec2 crop; varying vec2 uv;" +
    "void main() { uv = vec2(crop.y + crop.x * (0.5 + mirror * position.x * 0.5), 0.5 - position.y * 0.5);" +
    " gl_Position = mvp * vec4(position, 1.0); }",
    "precision mediump float; varying vec2 uv; uniform sampler2D image;" +
    "void main() { gl_FragColor = texture2D(image, uv); }", ["position"], ["mvp", "mirror", "crop", "image"]);
  // every solid of a frame in one buffer, placed on the CPU (software GL pays per draw call): position in the
  // reference space, normal, colour
  gfx.solid = program(gl,
    "attribute vec3 position; attribute vec3 normal; attribute vec4 colour; uniform mat4 viewProjection;" +
    " varying vec4 shade;" +
    "void main() { float light = 0.45 + 0.55 * max(dot(normalize(normal), normalize(vec3(0.3, 1.0, 0.5))), 0.0);" +
    " shade = vec4(colour.rgb * light, colour.a); gl_Position = viewProjection * vec4(position, 1.0); }",
    "precision mediump float; varying vec4 shade; void main() { gl_FragColor = shade; }",
    ["position", "normal", "colour"], ["viewProjection"]);
  gfx.quadBuffer = gl.createBuffer();
  gl.bindBuffer(gl.ARRAY_BUFFER, gfx.quadBuffer);
  gl.bufferData(gl.ARRAY_BUFFER, new Float32Array([-1, -1, 0, 1, -1, 0, -1, 1, 0, 1, 1, 0]), gl.STATIC_DRAW);
  gfx.meshes = { box: new Float32Array(boxVertices()), cylinder: new Float32Array(cylinderVertices(10)),
    sphere: new Float32Array(sphereVertices(4, 6)) };
  gfx.batchBuffers = [];
  gfx.drawn = null;
  gfx.panel = { canvas: document.createElement("canvas"), texture: texture(gl) };
  gfx.panel.canvas.width = 640;
  gfx.panel.canvas.height = 320;
  gfx.screens = {};
  gfx.anchor = null;
  panel.dirty = true;
}

function paintPanel(gl) {
  const canvas = gfx.panel.canvas, ctx = canvas.getContext("2d");
  ctx.fillStyle = CUE_COLOURS[cue()];
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  ctx.fillStyle = "#fff";
  const lines = statusLines().filter((line) => !line.startsWith("Buttons") && line !== PAIRING_HINT &&
    !line.startsWith("In "));
  const wrap = (size) => { // long lines (a refusal, a fault) wrap rather than run off the panel
    ctx.font = `${size}px sans-serif`;
    const wrapped = [];
    for (const line of lines) {
      let rest = line;
      while (ctx.measureText(rest).width > canvas.width - 28) {
        let cut = rest.lastIndexOf(" ", Math.floor(rest.length * (canvas.width - 28) / ctx.measureText(rest).width));
        if (cut <= 0) cut = Math.floor(rest.length / 2);
        wrapped.push(rest.slice(0, cut));
        rest = "  " + rest.slice(cut + 1);
      }
      wrapped.push(rest);
    }
    return wrapped;
  };
  // the status of two arms has more lines: a smaller font rather than lines cut off
  let size = 27, wrapped = wrap(size);
  if (wrapped.length > 9) wrapped = wrap(size = 22);
  const spacing = Math.round(size * 1.26);
  wrapped.slice(0, Math.floor((canvas.height - 8) / spacing)).forEach((line, i) =>
    ctx.fillText(line, 14, size + 5 + i * spacing));
  gl.bindTexture(gl.TEXTURE_2D, gfx.panel.texture);
  gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGBA, gl.RGBA, gl.UNSIGNED_BYTE, canvas);
  panel.dirty = false;
}

// column-major 4x4 helpers
function multiply(a, b) {
  const out = new Float32Array(16);
  for (let c = 0; c < 4; c++) {
    for (let r = 0; r < 4; r++) {
      let sum = 0;
      for (let k = 0; k < 4; k++) sum += a[k * 4 + r] * b[c * 4 + k];
      out[c * 4 + r] = sum;
    }
  }
  return out;
}

function columns(x, y, z, t) { // a matrix from its columns (3-vectors)
  return new Float32Array([...x, 0, ...y, 0, ...z, 0, ...t, 1]);
}

function fromRowMajor(m) {
  const out = new Float32Array(16);
  for (let r = 0; r < 4; r++) for (let c = 0; c < 4; c++) out[c * 4 + r] = m[r * 4 + c];
  return out;
}

function turnedY(angle, t) { // a rotation about the vertical, then a translation
  const c = Math.cos(angle), s = Math.sin(angle);
  return columns([c, 0, -s], [0, 1, 0], [s, 0, c], t);
}

// Where the operator's head was at the session's first frame: its position and heading (about the vertical).
function anchorFrom(viewer) {
  const p = viewer.transform.position, m = viewer.transform.matrix; // column-major: m[8..10] is the head's z axis
  return turnedY(Math.atan2(m[8], m[10]), [p.x, p.y, p.z]); // its forward (-z) on the floor stays ahead
}

// The first rig's base frame in the reference space: base x -> -z, base y -> -x, base z -> +y; of several rigs, the
// middle of their bases ahead of the operator.
function robotPlace(scene) {
  const place = multiply(gfx.anchor, columns([0, 0, -1], [-1, 0, 0], [0, 1, 0], ROBOT_FROM_HEAD));
  return multiply(place, columns([1, 0, 0], [0, 1, 0], [0, 0, 1], [0, -rigsMiddleY(scene), 0]));
}

function rigsMiddleY(scene) { // across the rigs' bases (their y in the first one's frame: row-major m[7])
  const rigs = sceneRigs(scene).filter((rig) => rig.base);
  return rigs.length ? rigs.reduce((sum, rig) => sum + rig.base[7], 0) / rigs.length : 0;
}

function capsule(place, s, radius) { // a cylinder from s[0..2] to s[3..5]; null when degenerate
  const a = [s[0], s[1], s[2]], d = [s[3] - s[0], s[4] - s[1], s[5] - s[2]];
  const length = Math.hypot(...d);
  if (length < 1e-6) return null;
  const z = d.map((c) => c / length);
  const other = Math.abs(z[0]) < 0.9 ? [1, 0, 0] : [0, 1, 0];
  const cross = (p, q) => [p[1] * q[2] - p[2] * q[1], p[2] * q[0] - p[0] * q[2], p[0] * q[1] - p[1] * q[0]];
  let x = cross(other, z);
  const n = Math.hypot(...x);
  x = x.map((c) => c / n);
  const y = cross(z, x);
  const mid = a.map((c, i) => c + d[i] / 2);
  return multiply(place, columns(x.map((c) => c * radius), y.map((c) => c * radius), z.map((c) => c * length / 2),
    mid));
}

function ball(place, p, radius) {
  return multiply(place, columns([radius, 0, 0], [0, radius, 0], [0, 0, radius], p));
}

// Which part of a texture a view shows: all of it, or of a stereo frame (left eye | right eye) the half of the view's
// eye, the left for a display without eyes ("none"). A mirror swaps the eyes too: the operator's left eye looks from
// the side the camera's right eye was on.
function imageCrop(eye, stereo, mirror) {
  if (!stereo) return [1, 0];
  return [0.5, (mirror ? eye === "left" : eye === "right") ? 0.5 : 0];
}

function drawQuad(gl, views, model, tex, mirror, stereo = false) {
  const { program: p, a, u } = gfx.quad;
  gl.useProgram(p);
  gl.bindBuffer(gl.ARRAY_BUFFER, gfx.quadBuffer);
  gl.enableVertexAttribArray(a.position);
  gl.vertexAttribPointer(a.position, 3, gl.FLOAT, false, 0, 0);
  gl.activeTexture(gl.TEXTURE0);
  gl.bindTexture(gl.TEXTURE_2D, tex);
  gl.uniform1i(u.image, 0);
  gl.uniform1f(u.mirror, mirror ? -1 : 1);
  for (const v of views) {
    gl.viewport(v.viewport.x, v.viewport.y, v.viewport.width, v.viewport.height);
    gl.uniformMatrix4fv(u.mvp, false, multiply(v.viewProjection, model));
    gl.uniform2fv(u.crop, imageCrop(v.eye, stereo, mirror));
    gl.drawArrays(gl.TRIANGLE_STRIP, 0, 4);
  }
  gl.disableVertexAttribArray(a.position);
}

// Shapes ([mesh: its name in gfx.meshes or a link's own, model, colour]) placed into one vertex array on the CPU
// (software GL pays per draw call): position in the reference space, normal, colour.
function placed(shapes) {
  const meshOf = (mesh) => (typeof mesh === "string" ? gfx.meshes[mesh] : mesh);
  const count = shapes.reduce((n, [mesh]) => n + meshOf(mesh).length / 6, 0);
  const out = new Float32Array(count * 10);
  let o = 0;
  for (const [name, m, colour] of shapes) {
    const mesh = meshOf(name);
    for (let i = 0; i < mesh.length; i += 6) {
      const x = mesh[i], y = mesh[i + 1], z = mesh[i + 2], nx = mesh[i + 3], ny = mesh[i + 4], nz = mesh[i + 5];
      out[o++] = m[0] * x + m[4] * y + m[8] * z + m[12];
      out[o++] = m[1] * x + m[5] * y + m[9] * z + m[13];
      out[o++] = m[2] * x + m[6] * y + m[10] * z + m[14];
      out[o++] = m[0] * nx + m[4] * ny + m[8] * nz;
      out[o++] = m[1] * nx + m[5] * ny + m[9] * nz;
      out[o++] = m[2] * nx + m[6] * ny + m[10] * nz;
      out[o++] = colour[0]; out[o++] = colour[1]; out[o++] = colour[2]; out[o++] = colour[3];
    }
  }
  return out;
}

// The scene's solids, opaque and translucent, in a vertex buffer each: rebuilt when a new scene arrives (a few
// times a second), drawn every XR frame.
function sceneBuffers(gl) {
  if (gfx.drawn === page.scene) return gfx.batches;
  gfx.drawn = page.scene;
  const start = performance.now();
  const place = robotPlace(page.scene);
  const rigs = sceneRigs(page.scene).map((rig, i) => [rig, rig.base ? multiply(place, fromRowMajor(rig.base)) : place,
    (page.body || [])[i] || []]);
  const shapes = [...worldShapes(page.scene, place),
    ...rigs.flatMap(([rig, rigPlace, body]) => [...robotShapes(rig, rigPlace, body), ...ghostShapes(rig, rigPlace)])];
  gfx.batches = [shapes.filter((shape) => shape[2][3] >= 1), shapes.filter((shape) => shape[2][3] < 1)]
    .map((batch, i) => {
      const vertices = placed(batch);
      gfx.batchBuffers[i] = gfx.batchBuffers[i] || gl.createBuffer();
      gl.bindBuffer(gl.ARRAY_BUFFER, gfx.batchBuffers[i]);
      gl.bufferData(gl.ARRAY_BUFFER, vertices, gl.DYNAMIC_DRAW);
      return { buffer: gfx.batchBuffers[i], count: vertices.length / 10 };
    });
  gfx.counts = { vertices: gfx.batches[0].count + gfx.batches[1].count, built_ms: performance.now() - start,
    mesh_vertices: shapes.reduce((n, [mesh]) => n + (typeof mesh === "string" ? 0 : mesh.length / 6), 0) };
  return gfx.batches;
}

function drawBatch(gl, views, batch) {
  if (!batch.count) return;
  const { program: p, a, u } = gfx.solid;
  gl.useProgram(p);
  gl.bindBuffer(gl.ARRAY_BUFFER, batch.buffer);
  for (const [name, size, offset] of [["position", 3, 0], ["normal", 3, 12], ["colour", 4, 24]]) {
    gl.enableVertexAttribArray(a[name]);
    gl.vertexAttribPointer(a[name], size, gl.FLOAT, false, 40, offset);
  }
  for (const v of views) {
    gl.viewport(v.viewport.x, v.viewport.y, v.viewport.width, v.viewport.height);
    gl.uniformMatrix4fv(u.viewProjection, false, v.viewProjection);
    gl.drawArrays(gl.TRIANGLES, 0, batch.count);
  }
  Object.values(a).forEach((at) => gl.disableVertexAttribArray(at));
}

// The robot as measured: its links' meshes where the body message brought them, else bones (cylinders as thick as
// the world's capsules) and the palm box; translucent, red where the hand touches; the fingertips as coloured balls
// and the thumb-index aperture as a thin white bar. The command: thin green bones.
function robotShapes(scene, place, body) {
  const shapes = [], measured = scene.measured;
  if (measured) {
    body.forEach(({ role, mesh }, i) => {
      const pose = (measured.meshes || [])[i];
      if (!pose) return; // a scene of another body (the next body message is on its way)
      const colour = measured.mesh_touching[i] ? COLOURS.touching : role === "arm" ? COLOURS.arm : COLOURS.hand;
      shapes.push([mesh, multiply(place, fromRowMajor(pose)), colour]);
    });
    for (const b of measured.bones) {
      const touching = b[7] >= 0 && measured.touching[b[7]];
      const colour = touching ? COLOURS.touching : b[7] === ARM_BONE ? COLOURS.arm : COLOURS.hand;
      const model = capsule(place, b, b[6]);
      if (!model) continue;
      shapes.push(["cylinder", model, colour]);
    }
    if (measured.palm && measured.palm.pose) { // none where the palm link is drawn as its mesh
      const { pose, half, touching } = measured.palm;
      shapes.push(["box", multiply(place, multiply(fromRowMajor(pose), columns([half[0], 0, 0], [0, half[1], 0],
        [0, 0, half[2]], [0, 0, 0]))), touching ? COLOURS.touching : COLOURS.hand]);
    }
    (measured.tips || []).forEach((tip, i) => {
      shapes.push(["sphere", ball(place, tip, TIP_RADIUS), COLOURS.tips[i % COLOURS.tips.length]]);
    });
    const tips = measured.tips || [], thumb = scene.fingers.indexOf("thumb"), index = scene.fingers.indexOf("index");
    if (thumb >= 0 && index >= 0 && tips[thumb] && tips[index]) {
      const model = capsule(place, [...tips[thumb], ...tips[index]], 0.002);
      if (model) shapes.push(["cylinder", model, COLOURS.aperture]);
    }
  }
  return shapes;
}

// The body message's links: each mesh's triangles, each corner with its triangle's normal (flat: CAD parts have
// sharp edges), in the link's frame and gfx.meshes' layout.
function bodyMeshes(message) { // one rig's
  const decoded = (text, Type) => new Type(Uint8Array.from(atob(text), (c) => c.charCodeAt(0)).buffer);
  return message.meshes.map(({ role, link, vertices, triangles }) => {
    const v = decoded(vertices, Float32Array), t = decoded(triangles, Uint32Array);
    const mesh = new Float32Array(t.length * 6);
    for (let i = 0; i < t.length; i += 3) {
      const [a, b, c] = [3 * t[i], 3 * t[i + 1], 3 * t[i + 2]];
      const e = [v[b] - v[a], v[b + 1] - v[a + 1], v[b + 2] - v[a + 2]];
      const f = [v[c] - v[a], v[c + 1] - v[a + 1], v[c + 2] - v[a + 2]];
      const n = [e[1] * f[2] - e[2] * f[1], e[2] * f[0] - e[0] * f[2], e[0] * f[1] - e[1] * f[0]];
      const length = Math.hypot(...n) || 1;
      [a, b, c].forEach((k, j) => mesh.set([v[k], v[k + 1], v[k + 2], ...n.map((x) => x / length)], 6 * (i + j)));
    }
    return { role, link, mesh };
  });
}

function ghostShapes(scene, place) {
  const shapes = [];
  for (const b of (scene.commanded || {}).bones || []) {
    const model = capsule(place, b, GHOST_RADIUS);
    if (model) shapes.push(["cylinder", model, COLOURS.ghost]);
  }
  return shapes;
}

function worldShapes(scene, place) { // the table top where the station knows it; the objects when asked for
  const shapes = [];
  if (scene.table_z !== undefined) { // under every rig
    const middle = rigsMiddleY(scene), half = TABLE_HALF[1] + Math.abs(middle);
    shapes.push(["box", multiply(place, columns([TABLE_HALF[0], 0, 0], [0, half, 0], [0, 0, 0.002],
      [TABLE_CENTRE_X, middle, scene.table_z - 0.002])), COLOURS.table]);
  }
  (scene.objects || []).forEach((object, i) => {
    const [hx, hy, hz] = object.half, [cx, cy, cz] = object.centre;
    const box = columns([hx, 0, 0], [0, hy, 0], [0, 0, hz], [cx, cy, cz]);
    shapes.push(["box", multiply(place, multiply(fromRowMajor(object.pose), box)),
      COLOURS.objects[i % COLOURS.objects.length]]);
  });
  return shapes;
}

// The cameras' screens: the first fixed camera ahead, the others beside it, each as wide as its place allows.
function screenModels() {
  const names = Object.keys(view.frames).sort((a, b) =>
    Number(!!view.frames[a].header.mount) - Number(!!view.frames[b].header.mount) || a.localeCompare(b));
  return names.map((name, i) => {
    const { bitmap, header } = view.frames[name];
    const spot = i === 0 ? MAIN_SCREEN : { ...SIDE_SCREEN, centre: [SIDE_SCREEN.centre[0],
      SIDE_SCREEN.centre[1] + 0.5 * (i - 1), SIDE_SCREEN.centre[2]] };
    const half = spot.width / 2, halfHeight = half * bitmap.height / eyeWidth(bitmap, header);
    const place = multiply(gfx.anchor, turnedY(spot.turn || 0, spot.centre));
    return [name, multiply(place, columns([half, 0, 0], [0, halfHeight, 0], [0, 0, 1], [0, 0, 0]))];
  });
}

function draw(gl, layer, viewer) {
  gl.bindFramebuffer(gl.FRAMEBUFFER, layer.framebuffer);
  gl.clearColor(0.05, 0.05, 0.08, page.mode === "immersive-ar" ? 0 : 1);
  gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
  if (!viewer) return;
  if (!gfx.anchor) gfx.anchor = anchorFrom(viewer);
  const views = viewer.views.map((v) => ({ viewport: layer.getViewport(v), eye: v.eye,
    viewProjection: multiply(v.projectionMatrix, v.transform.inverse.matrix) }));
  gl.enable(gl.DEPTH_TEST);
  gl.enable(gl.BLEND);
  gl.blendFunc(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA);
  // one texture upload per XR frame at most (each costs a CPU-drawn headset its frame rate): the oldest new frame
  const upload = Object.keys(view.dirty).filter((name) => view.dirty[name])
    .sort((a, b) => view.frames[a].arrived - view.frames[b].arrived)[0];
  for (const [name, model] of screenModels()) {
    const frame = view.frames[name];
    let screen = gfx.screens[name];
    if (!screen) screen = gfx.screens[name] = { texture: texture(gl) };
    if (name === upload) {
      gl.bindTexture(gl.TEXTURE_2D, screen.texture);
      const { width, height } = frame.bitmap;
      if (screen.width === width && screen.height === height) { // into the texture there is: no reallocation
        gl.texSubImage2D(gl.TEXTURE_2D, 0, 0, 0, gl.RGBA, gl.UNSIGNED_BYTE, frame.bitmap);
      } else {
        gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGBA, gl.RGBA, gl.UNSIGNED_BYTE, frame.bitmap);
        Object.assign(screen, { width, height });
      }
      view.dirty[name] = false;
    }
    drawQuad(gl, views, model, screen.texture, frame.header.mirror, !!frame.header.stereo);
  }
  if (page.scene) {
    const [opaque, translucent] = sceneBuffers(gl);
    drawBatch(gl, views, opaque);
    gl.depthMask(false); // translucent: what lies behind shows through
    drawBatch(gl, views, translucent);
    gl.depthMask(true);
  }
  gl.disable(gl.DEPTH_TEST); // the status is never hidden
  if (panel.dirty) paintPanel(gl);
  drawQuad(gl, views, multiply(viewer.transform.matrix,
    multiply(PANEL_FROM_HEAD, columns([PANEL_HALF[0], 0, 0], [0, PANEL_HALF[1], 0], [0, 0, 1], [0, 0, 0]))),
  gfx.panel.texture, false);
}

// ---------------------------------------------------------------- the session

async function enter(mode) {
  const session = await navigator.xr.requestSession(mode, { optionalFeatures: ["local-floor", "hand-tracking"] });
  const canvas = document.createElement("canvas");
  const gl = canvas.getContext("webgl", { xrCompatible: true, alpha: true });
  setUpDrawing(gl);
  session.updateRenderState({ baseLayer: new XRWebGLLayer(session, gl) });
  let space;
  try {
    space = await session.requestReferenceSpace("local-floor");
  } catch (error) {
    space = await session.requestReferenceSpace("local"); // e.g. Vision Pro: origin at the head's start
  }
  page.session = session;
  page.mode = mode;
  panel.dirty = true;
  session.addEventListener("end", () => { page.session = null; showStatus(); });
  const onFrame = (time, frame) => {
    session.requestAnimationFrame(onFrame);
    const viewer = frame.getViewerPose(space);
    const socket = page.socket;
    if (socket && socket.readyState === WebSocket.OPEN && socket.bufferedAmount < MAX_BUFFERED_BYTES) {
      socket.send(JSON.stringify(xrState(time, frame, space, viewer)));
      page.sent += 1;
      if (page.sent % 90 === 0) showStatus();
    }
    draw(gl, session.renderState.baseLayer, viewer);
  };
  session.requestAnimationFrame(onFrame);
  showStatus();
}

async function setUp() {
  const support = document.getElementById("support");
  if (!navigator.xr) {
    support.textContent = "This browser has no WebXR: the cameras and the status show here. For the headset, open " +
      "this page in its browser (Meta Quest Browser, Pico Browser, or Safari on Apple Vision Pro with WebXR enabled " +
      "in Settings > Apps > Safari > Advanced > Feature Flags).";
    return;
  }
  for (const [mode, id] of [["immersive-vr", "enter-vr"], ["immersive-ar", "enter-ar"]]) {
    const button = document.getElementById(id);
    if (await navigator.xr.isSessionSupported(mode) && !(page.status && page.status.view_only)) {
      button.hidden = false;
      button.disabled = false;
      button.onclick = () => enter(mode).catch((error) => { support.textContent = `Could not start ${mode}: ${error}`; });
    }
  }
}

connect();
setUp();
