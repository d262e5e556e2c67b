// TeleDex WebXR sender. Every XR frame it sends the controllers, their buttons and the tracked hands (25 WebXR
// joints) to the teleop over the page's own WSS socket, as one XR state object in XRoboToolkit's schema: poses
// "x,y,z,qx,qy,qz,qw" in the reference space (metres, y up, -z forward), per-joint OpenXR location flags, and
// timeStampNs = the browser's time origin + the frame time, in ns (the sample's time on this headset's clock).
// The teleop pushes back its status (state machine, what the arm does, stale input, robot faults), shown below and
// in the headset. Off this computer the socket needs pairing: the URL printed in the teleop's terminal carries a
// one-time token; the teleop answers it with a session key that this tab keeps for its reconnects.
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

const page = { socket: null, connected: false, status: null, session: null, mode: "", sent: 0 };

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
  socket.onopen = () => { page.connected = true; showStatus(); };
  socket.onclose = () => {
    page.connected = false;
    page.socket = null;
    showStatus();
    setTimeout(connect, 1000);
  };
  socket.onmessage = (event) => {
    const message = JSON.parse(event.data);
    if (message.type === "paired") { // the token is spent: reconnect with the session key, and drop the token
      sessionStorage.setItem("teledex-session", message.session);
      history.replaceState(null, "", location.pathname);
    } else if (message.type === "status") {
      page.status = message;
      showStatus();
    }
  };
  page.socket = socket;
}

function statusLines() {
  const lines = [page.connected ? "Connected to TeleDex" : "Not connected (retrying)"];
  if (!page.connected) lines.push(PAIRING_HINT);
  const s = page.status;
  if (s && page.connected) {
    if (s.state) lines.push(`State: ${s.state}`);
    if (s.stale !== undefined) lines.push(s.stale ? "Input: STALE - the robot holds (follows again when it returns)" :
      "Input: live");
    if (s.arm) lines.push(`Arm: ${s.arm}`);
    if (s.tracking === "another page") lines.push("Another page is sending tracking: this page is refused");
    if (s.buttons) lines.push("Buttons: " + Object.entries(s.buttons).map(([b, key]) => `${b} ${key}`).join(", "));
    for (const [part, fault] of Object.entries(s.faults || {})) lines.push(`FAULT ${part}: ${fault}`);
  }
  if (page.session) lines.push(`In ${page.mode}, ${page.sent} samples sent`);
  return lines;
}

function showStatus() {
  const lines = statusLines();
  const box = document.getElementById("status");
  box.textContent = lines.join("\n");
  box.classList.toggle("bad", !page.connected || (page.status && (page.status.stale ||
    Object.keys(page.status.faults || {}).length > 0)));
  panel.dirty = true;
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

// ---------------------------------------------------------------- the in-headset status panel (WebGL)

const panel = { dirty: true, canvas: null, texture: null, program: null, buffer: null };

function makePanel(gl) {
  panel.canvas = document.createElement("canvas");
  panel.canvas.width = 512;
  panel.canvas.height = 200;
  const shader = (type, source) => {
    const s = gl.createShader(type);
    gl.shaderSource(s, source);
    gl.compileShader(s);
    return s;
  };
  const program = gl.createProgram();
  gl.attachShader(program, shader(gl.VERTEX_SHADER,
    "attribute vec2 corner; uniform mat4 mvp; varying vec2 uv;" +
    "void main() { uv = vec2(corner.x * 0.5 + 0.5, 0.5 - corner.y * 0.5);" +
    " gl_Position = mvp * vec4(corner.x * 0.24, corner.y * 0.094, 0.0, 1.0); }"));
  gl.attachShader(program, shader(gl.FRAGMENT_SHADER,
    "precision mediump float; varying vec2 uv; uniform sampler2D text;" +
    "void main() { gl_FragColor = texture2D(text, uv); }"));
  gl.linkProgram(program);
  panel.program = program;
  panel.buffer = gl.createBuffer();
  gl.bindBuffer(gl.ARRAY_BUFFER, panel.buffer);
  gl.bufferData(gl.ARRAY_BUFFER, new Float32Array([-1, -1, 1, -1, -1, 1, 1, 1]), gl.STATIC_DRAW);
  panel.texture = gl.createTexture();
}

function paintPanel(gl) {
  const ctx = panel.canvas.getContext("2d");
  const bad = !page.connected || (page.status && (page.status.stale || Object.keys(page.status.faults || {}).length));
  ctx.fillStyle = bad ? "rgba(120, 20, 20, 0.85)" : "rgba(20, 20, 20, 0.8)";
  ctx.fillRect(0, 0, panel.canvas.width, panel.canvas.height);
  ctx.fillStyle = "#fff";
  ctx.font = "28px sans-serif";
  statusLines().filter((line) => !line.startsWith("Buttons") && line !== PAIRING_HINT).slice(0, 5)
    .forEach((line, i) => ctx.fillText(line, 16, 36 + i * 36));
  gl.bindTexture(gl.TEXTURE_2D, panel.texture);
  gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGBA, gl.RGBA, gl.UNSIGNED_BYTE, panel.canvas);
  gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.LINEAR);
  gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_S, gl.CLAMP_TO_EDGE);
  gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_T, gl.CLAMP_TO_EDGE);
  panel.dirty = false;
}

function multiply(a, b) { // column-major 4x4
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

// The panel hangs 0.8 m ahead of the eyes and 0.28 m below them, following the head.
const PANEL_FROM_HEAD = new Float32Array([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, -0.28, -0.8, 1]);

function draw(gl, layer, viewer) {
  gl.bindFramebuffer(gl.FRAMEBUFFER, layer.framebuffer);
  gl.clearColor(0.05, 0.05, 0.08, page.mode === "immersive-ar" ? 0 : 1);
  gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
  if (!viewer) return;
  if (panel.dirty) paintPanel(gl);
  gl.useProgram(panel.program);
  gl.enable(gl.BLEND);
  gl.blendFunc(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA);
  gl.bindBuffer(gl.ARRAY_BUFFER, panel.buffer);
  const corner = gl.getAttribLocation(panel.program, "corner");
  gl.enableVertexAttribArray(corner);
  gl.vertexAttribPointer(corner, 2, gl.FLOAT, false, 0, 0);
  gl.activeTexture(gl.TEXTURE0);
  gl.bindTexture(gl.TEXTURE_2D, panel.texture);
  gl.uniform1i(gl.getUniformLocation(panel.program, "text"), 0);
  const model = multiply(viewer.transform.matrix, PANEL_FROM_HEAD);
  for (const view of viewer.views) {
    const viewport = layer.getViewport(view);
    gl.viewport(viewport.x, viewport.y, viewport.width, viewport.height);
    const mvp = multiply(view.projectionMatrix, multiply(view.transform.inverse.matrix, model));
    gl.uniformMatrix4fv(gl.getUniformLocation(panel.program, "mvp"), false, mvp);
    gl.drawArrays(gl.TRIANGLE_STRIP, 0, 4);
  }
}

// ---------------------------------------------------------------- the session

async function enter(mode) {
  const session = await navigator.xr.requestSession(mode, { optionalFeatures: ["local-floor", "hand-tracking"] });
  const canvas = document.createElement("canvas");
  const gl = canvas.getContext("webgl", { xrCompatible: true, alpha: true });
  makePanel(gl);
  const layer = new XRWebGLLayer(session, gl);
  session.updateRenderState({ baseLayer: layer });
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
    support.textContent = "This browser has no WebXR. Open this page in the headset's browser (Meta Quest " +
      "Browser, Pico Browser, or Safari on Apple Vision Pro with WebXR enabled in Settings > Apps > Safari > " +
      "Advanced > Feature Flags).";
    return;
  }
  for (const [mode, id] of [["immersive-vr", "enter-vr"], ["immersive-ar", "enter-ar"]]) {
    const button = document.getElementById(id);
    if (await navigator.xr.isSessionSupported(mode)) {
      button.hidden = false;
      button.disabled = false;
      button.onclick = () => enter(mode).catch((error) => { support.textContent = `Could not start ${mode}: ${error}`; });
    }
  }
}

connect();
setUp();
