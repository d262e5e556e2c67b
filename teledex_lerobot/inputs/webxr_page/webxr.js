// TeleDex WebXR sender. Every XR frame it sends the controllers, their buttons and the tracked hands (25 WebXR
// joints) to the teleop over the page's own WSS socket, as one XR state object in XRoboToolkit's schema: poses
// "x,y,z,qx,qy,qz,qw" in the reference space (metres, y up, -z forward), per-joint OpenXR location flags, and
// timeStampNs = the browser's time origin + the frame time, in ns (the sample's time on this headset's clock).
// The teleop pushes back its status (state machine, what the arm does, the grasp, stale input, robot faults), shown
// below and in the headset, and what the robot sees: its camera frames (binary: "TDXF", a uint32 header length, a
// JSON header, a JPEG) and its drawing (the robot measured, the command ghosted, the world's objects), shown on a
// screen and at the robot's place in front of the operator. Off this computer the socket needs pairing: the URL printed in the teleop's terminal carries a
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

const page = { socket: null, connected: false, status: null, session: null, mode: "", sent: 0, scene: null };
// The camera's frames as they arrive: the newest per camera, and [arrival, latency] in ms of the last 600 (the
// latency from the robot's observation to the decoded frame, on the wall clock both machines' pages share).
const view = { frames: {}, stats: [], dirty: false };
window.teledexView = { page, view };

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
      showStatus();
    } else if (message.type === "scene") {
      page.scene = message;
    }
  };
  page.socket = socket;
}

async function showFrame(data) {
  const bytes = new Uint8Array(data);
  if (String.fromCharCode(...bytes.subarray(0, 4)) !== "TDXF") return;
  const length = new DataView(data).getUint32(4, true);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + length)));
  const bitmap = await createImageBitmap(new Blob([bytes.subarray(8 + length)], { type: "image/jpeg" }));
  const now = performance.timeOrigin + performance.now();
  view.stats.push([now, now - header.published_ms]);
  if (view.stats.length > 600) view.stats.shift();
  const old = view.frames[header.camera];
  if (old) old.bitmap.close();
  view.frames[header.camera] = { bitmap, header };
  view.dirty = true;
  const canvas = document.getElementById("camera");
  if (canvas && header.camera === Object.keys(view.frames)[0]) {
    canvas.hidden = false;
    canvas.width = bitmap.width;
    canvas.height = bitmap.height;
    canvas.getContext("2d").drawImage(bitmap, 0, 0);
  }
}

// What the operator must know at a glance: following (green), waiting or disengaged (amber), holding on stale
// input, a fault or Emergency (red).
function cue() {
  const s = page.status;
  if (!page.connected || !s) return "bad";
  if (s.stale || Object.keys(s.faults || {}).length || s.state === "Emergency") return "bad";
  return s.engaged ? "engaged" : "waiting";
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
    if (s.grasp) lines.push(`Grasp: ${s.grasp} (stick press: next)`);
    if (s.episode) lines.push(`Episode ${s.episode}`);
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
  box.className = cue();
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

// ---------------------------------------------------------------- drawing in the headset (WebGL 1)

// Placements in the reference space (metres; y up, -z ahead of where the operator stood at the start). The robot's
// base frame (x forward, y left, z up) sits ahead of the operator at a table's height, turned to face the same way,
// so the hand moves the way the controller does; the camera's screen hangs beyond it; the status panel follows the
// head.
const ROBOT_ORIGIN = [0, 1.0, -0.45];
const SCREEN_CENTRE = [0, 1.8, -1.7], SCREEN_HALF_HEIGHT = 0.3;
const PANEL_FROM_HEAD = new Float32Array([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, -0.3, -0.3, -0.8, 1]); // low left
const PANEL_HALF = [0.24, 0.094];
// the ghost is thinner than the robot: hidden inside it where the robot is where it was commanded to be
const LINK_RADIUS = 0.014, GHOST_RADIUS = 0.009;
const TABLE_HALF = [0.25, 0.35], TABLE_CENTRE_X = 0.35; // the world's workspace, in the robot's base frame
const COLOURS = { measured: [0.62, 0.66, 0.72, 1], ghost: [0.3, 0.95, 0.5, 0.55], table: [0.22, 0.24, 0.3, 1],
  objects: [[0.9, 0.3, 0.3, 1], [0.3, 0.8, 0.4, 1], [0.3, 0.6, 0.95, 1], [0.6, 0.45, 0.3, 1]] };
const CUE_COLOURS = { engaged: "rgba(20, 90, 40, 0.88)", waiting: "rgba(120, 90, 10, 0.88)",
  bad: "rgba(130, 20, 20, 0.88)" };

const gfx = { quad: null, box: null, panel: null, screen: null, quadBuffer: null, boxBuffer: null };

function program(gl, vertex, fragment) {
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
  return p;
}

function texture(gl) {
  const t = gl.createTexture();
  gl.bindTexture(gl.TEXTURE_2D, t);
  gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.LINEAR);
  gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_S, gl.CLAMP_TO_EDGE);
  gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_T, gl.CLAMP_TO_EDGE);
  return t;
}

function setUpDrawing(gl) {
  gfx.quad = program(gl,
    "attribute vec3 position; uniform mat4 mvp; varying vec2 uv;" +
    "void main() { uv = vec2(position.x * 0.5 + 0.5, 0.5 - position.y * 0.5); gl_Position = mvp * vec4(position, 1.0); }",
    "precision mediump float; varying vec2 uv; uniform sampler2D image;" +
    "void main() { gl_FragColor = texture2D(image, uv); }");
  gfx.box = program(gl,
    "attribute vec3 position; attribute vec3 normal; uniform mat4 mvp; uniform mat4 model; varying float light;" +
    "void main() { vec3 n = normalize(mat3(model) * normal);" +
    " light = 0.45 + 0.55 * max(dot(n, normalize(vec3(0.3, 1.0, 0.5))), 0.0); gl_Position = mvp * vec4(position, 1.0); }",
    "precision mediump float; varying float light; uniform vec4 colour;" +
    "void main() { gl_FragColor = vec4(colour.rgb * light, colour.a); }");
  gfx.quadBuffer = gl.createBuffer();
  gl.bindBuffer(gl.ARRAY_BUFFER, gfx.quadBuffer);
  gl.bufferData(gl.ARRAY_BUFFER, new Float32Array([-1, -1, 0, 1, -1, 0, -1, 1, 0, 1, 1, 0]), gl.STATIC_DRAW);
  const faces = [[0, 1], [0, -1], [1, 1], [1, -1], [2, 1], [2, -1]]; // axis, sign: two triangles each
  const vertices = [];
  for (const [axis, sign] of faces) {
    const u = (axis + 1) % 3, v = (axis + 2) % 3;
    const corner = (a, b) => {
      const p = [0, 0, 0], n = [0, 0, 0];
      p[axis] = sign; p[u] = a; p[v] = b * sign; n[axis] = sign;
      vertices.push(...p, ...n);
    };
    corner(-1, -1); corner(1, -1); corner(1, 1); corner(-1, -1); corner(1, 1); corner(-1, 1);
  }
  gfx.boxBuffer = gl.createBuffer();
  gl.bindBuffer(gl.ARRAY_BUFFER, gfx.boxBuffer);
  gl.bufferData(gl.ARRAY_BUFFER, new Float32Array(vertices), gl.STATIC_DRAW);
  gfx.panel = { canvas: document.createElement("canvas"), texture: texture(gl) };
  gfx.panel.canvas.width = 512;
  gfx.panel.canvas.height = 200;
  gfx.screen = { texture: texture(gl), ready: false };
  panel.dirty = true;
}

const panel = { dirty: true };

function paintPanel(gl) {
  const canvas = gfx.panel.canvas, ctx = canvas.getContext("2d");
  ctx.fillStyle = CUE_COLOURS[cue()];
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  ctx.fillStyle = "#fff";
  ctx.font = "26px sans-serif";
  statusLines().filter((line) => !line.startsWith("Buttons") && line !== PAIRING_HINT && !line.startsWith("In "))
    .slice(0, 6)
    .forEach((line, i) => ctx.fillText(line, 14, 30 + i * 32));
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

// the robot's base frame in the reference space: base x -> -z, base y -> -x, base z -> +y
const ROBOT_PLACE = columns([0, 0, -1], [-1, 0, 0], [0, 1, 0], ROBOT_ORIGIN);

function segmentModel(s, radius) {
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
  return multiply(ROBOT_PLACE, columns(x.map((c) => c * radius), y.map((c) => c * radius),
    z.map((c) => c * length / 2), mid));
}

function drawQuad(gl, views, model, tex) {
  gl.useProgram(gfx.quad);
  gl.bindBuffer(gl.ARRAY_BUFFER, gfx.quadBuffer);
  const position = gl.getAttribLocation(gfx.quad, "position");
  gl.enableVertexAttribArray(position);
  gl.vertexAttribPointer(position, 3, gl.FLOAT, false, 0, 0);
  gl.activeTexture(gl.TEXTURE0);
  gl.bindTexture(gl.TEXTURE_2D, tex);
  gl.uniform1i(gl.getUniformLocation(gfx.quad, "image"), 0);
  for (const v of views) {
    gl.viewport(v.viewport.x, v.viewport.y, v.viewport.width, v.viewport.height);
    gl.uniformMatrix4fv(gl.getUniformLocation(gfx.quad, "mvp"), false, multiply(v.viewProjection, model));
    gl.drawArrays(gl.TRIANGLE_STRIP, 0, 4);
  }
  gl.disableVertexAttribArray(position);
}

function drawBoxes(gl, views, boxes) { // boxes: [model, colour]
  gl.useProgram(gfx.box);
  gl.bindBuffer(gl.ARRAY_BUFFER, gfx.boxBuffer);
  const position = gl.getAttribLocation(gfx.box, "position"), normal = gl.getAttribLocation(gfx.box, "normal");
  gl.enableVertexAttribArray(position);
  gl.enableVertexAttribArray(normal);
  gl.vertexAttribPointer(position, 3, gl.FLOAT, false, 24, 0);
  gl.vertexAttribPointer(normal, 3, gl.FLOAT, false, 24, 12);
  const mvp = gl.getUniformLocation(gfx.box, "mvp"), modelAt = gl.getUniformLocation(gfx.box, "model");
  const colourAt = gl.getUniformLocation(gfx.box, "colour");
  for (const v of views) {
    gl.viewport(v.viewport.x, v.viewport.y, v.viewport.width, v.viewport.height);
    for (const [model, colour] of boxes) {
      gl.uniformMatrix4fv(mvp, false, multiply(v.viewProjection, model));
      gl.uniformMatrix4fv(modelAt, false, model);
      gl.uniform4fv(colourAt, colour);
      gl.drawArrays(gl.TRIANGLES, 0, 36);
    }
  }
  gl.disableVertexAttribArray(position);
  gl.disableVertexAttribArray(normal);
}

function sceneBoxes(scene) {
  const solid = [], ghost = [];
  const objects = scene.objects || [];
  if (objects.length) { // the table the objects stand on (its top under the lowest object), for depth
    const top = Math.min(...objects.map((o) => o.pose[11] + o.centre[2] - o.half[2]));
    solid.push([multiply(ROBOT_PLACE, columns([TABLE_HALF[0], 0, 0], [0, TABLE_HALF[1], 0], [0, 0, 0.005],
      [TABLE_CENTRE_X, 0, top - 0.005])), COLOURS.table]);
  }
  for (const s of scene.measured || []) {
    const m = segmentModel(s, LINK_RADIUS);
    if (m) solid.push([m, COLOURS.measured]);
  }
  objects.forEach((object, i) => {
    const [hx, hy, hz] = object.half, [cx, cy, cz] = object.centre;
    const box = columns([hx, 0, 0], [0, hy, 0], [0, 0, hz], [cx, cy, cz]);
    solid.push([multiply(ROBOT_PLACE, multiply(fromRowMajor(object.pose), box)),
      COLOURS.objects[i % COLOURS.objects.length]]);
  });
  for (const s of scene.commanded || []) {
    const m = segmentModel(s, GHOST_RADIUS);
    if (m) ghost.push([m, COLOURS.ghost]);
  }
  return { solid, ghost };
}

function draw(gl, layer, viewer) {
  gl.bindFramebuffer(gl.FRAMEBUFFER, layer.framebuffer);
  gl.clearColor(0.05, 0.05, 0.08, page.mode === "immersive-ar" ? 0 : 1);
  gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
  if (!viewer) return;
  const views = viewer.views.map((v) => ({ viewport: layer.getViewport(v),
    viewProjection: multiply(v.projectionMatrix, v.transform.inverse.matrix) }));
  gl.enable(gl.DEPTH_TEST);
  gl.enable(gl.BLEND);
  gl.blendFunc(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA);
  if (page.scene) {
    const { solid, ghost } = sceneBoxes(page.scene);
    drawBoxes(gl, views, solid);
    gl.depthMask(false); // the ghost shows through, and what it covers shows through it
    drawBoxes(gl, views, ghost);
    gl.depthMask(true);
  }
  const first = Object.values(view.frames)[0];
  if (first) {
    if (view.dirty) {
      gl.bindTexture(gl.TEXTURE_2D, gfx.screen.texture);
      gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGBA, gl.RGBA, gl.UNSIGNED_BYTE, first.bitmap);
      view.dirty = false;
    }
    const halfWidth = SCREEN_HALF_HEIGHT * first.bitmap.width / first.bitmap.height;
    drawQuad(gl, views, columns([halfWidth, 0, 0], [0, SCREEN_HALF_HEIGHT, 0], [0, 0, 1], SCREEN_CENTRE),
      gfx.screen.texture);
  }
  gl.disable(gl.DEPTH_TEST); // the status is never hidden
  if (panel.dirty) paintPanel(gl);
  drawQuad(gl, views, multiply(viewer.transform.matrix,
    multiply(PANEL_FROM_HEAD, columns([PANEL_HALF[0], 0, 0], [0, PANEL_HALF[1], 0], [0, 0, 1], [0, 0, 0]))),
  gfx.panel.texture);
}

// ---------------------------------------------------------------- the session

async function enter(mode) {
  const session = await navigator.xr.requestSession(mode, { optionalFeatures: ["local-floor", "hand-tracking"] });
  const canvas = document.createElement("canvas");
  const gl = canvas.getContext("webgl", { xrCompatible: true, alpha: true });
  setUpDrawing(gl);
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
