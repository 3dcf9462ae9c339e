// The browser view of tmux-bridge serve: the WebSocket adapter protocol (/ws) driving
// an xterm.js terminal. Frames: type + name + 0x00 + payload (0x01 output, 0x02 keys,
// 0x03 "cols:rows", 0x04 name 0x00 mime 0x00 bytes).
"use strict";
const LINE_HEIGHT = 1.2; // a row, in heights of the font's glyph area: room under the underscore at any DPR
(() => {
  const $ = (id) => document.getElementById(id);
  const enc = new TextEncoder();
  const dec = new TextDecoder();
  // Every character visible and distinct (docs/browser-view.md): the vendored DejaVu
  // Sans Mono first, then vendored fonts for what it lacks (the glyphs agent CLIs draw,
  // emoji, CJK); rows a little taller than the font (at 1.0 the DOM renderer's next row
  // covers the underscore at device-pixel-ratio 1); Unicode 11 widths, as tmux counts.
  const FONT = '"tmux-bridge DejaVu Sans Mono", "Noto Sans Symbols 2", "Noto Sans Symbols", "Noto Sans Math", "Noto Emoji", "Noto Sans SC", "Noto Sans KR", monospace';
  const term = new Terminal({
    convertEol: false, scrollback: 10000, fontSize: 14, fontFamily: FONT, lineHeight: LINE_HEIGHT,
    allowProposedApi: true,
  });
  const fit = new FitAddon.FitAddon();
  term.loadAddon(fit);
  term.loadAddon(new Unicode11Addon.Unicode11Addon());
  term.unicode.activeVersion = "11";
  // xterm.js measures its cell once, on open: the font must be there by then
  const opened = Promise.all(["14px", "bold 14px"].map((f) => document.fonts.load(`${f} "tmux-bridge DejaVu Sans Mono"`)))
    .catch(() => null).then(() => term.open($("terminal")));
  let ws = null, chosen = null, chosenAgent = null, nextId = 1;
  const agents = new Map();
  const pending = new Map();
  // for tiles.js: every output frame and every event, whatever pane it is for
  const frameListeners = new Set();
  const eventListeners = new Set();

  const frame = (type, name, ...parts) => {
    const bytes = [Uint8Array.of(type), enc.encode(name), Uint8Array.of(0), ...parts];
    const out = new Uint8Array(bytes.reduce((n, b) => n + b.length, 0));
    let at = 0;
    for (const b of bytes) { out.set(b, at); at += b.length; }
    return out;
  };
  const request = (message) => new Promise((resolve) => {
    const id = String(nextId++);
    pending.set(id, resolve);
    ws.send(JSON.stringify({ id, ...message }));
  });
  const notice = (text) => { $("notice").textContent = text; };

  function connect(token) {
    sessionStorage.setItem("tmux-bridge-token", token);
    ws = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`);
    ws.binaryType = "arraybuffer";
    ws.onopen = () => ws.send(JSON.stringify({ type: "auth", token }));
    ws.onclose = () => { $("status").textContent = "disconnected"; };
    ws.onmessage = (event) => typeof event.data === "string" ? onJson(JSON.parse(event.data)) : onBinary(new Uint8Array(event.data));
  }

  function onBinary(data) {
    const zero = data.indexOf(0, 1);
    if (data[0] !== 1) return;
    const name = dec.decode(data.subarray(1, zero));
    for (const listener of frameListeners) listener(name, data.subarray(zero + 1));
    if (name === chosen) term.write(data.subarray(zero + 1));
  }

  function onJson(message) {
    if (message.id && pending.has(message.id)) { pending.get(message.id)(message); pending.delete(message.id); return; }
    for (const listener of eventListeners) listener(message);
    if (message.type === "auth") {
      $("status").textContent = message.ok ? `connected (${message.role === "read" ? "read-only" : "full"})` : message.error;
      if (message.ok) { listPanes(); followAgents(); }
    } else if (message.type === "agent-added" || message.type === "agent-updated") { agents.set(message.agent.name, message.agent); showAgents(); }
    else if (message.type === "agent-removed") { agents.delete(message.name); showAgents(); } else if (message.type === "lagging") notice(`${message.agent}: ${message.reason}; redrawn from a fresh snapshot`);
    else if ((message.type === "resize" || message.type === "size") && message.agent === chosen) term.resize(message.cols, message.rows);
    else if (message.type === "upload") notice(`uploaded ${message.path} (${message.pasted})`);
    else if (message.type === "error") notice(message.error);
  }

  async function listPanes() {
    const reply = await request({ type: "list-panes" });
    const list = $("panes");
    list.replaceChildren();
    for (const pane of reply.panes || []) {
      const item = document.createElement("li");
      const button = document.createElement("button");
      button.textContent = `${pane.target}${pane.label ? " " + pane.label : ""}`;
      button.dataset.target = pane.target;
      button.onclick = () => { chosenAgent = null; showAgents(); choose(pane.target); };
      item.append(button);
      list.append(item);
    }
  }

  async function followAgents() {
    const reply = await request({ type: "subscribe-agents" });
    agents.clear();
    for (const agent of reply.agents || []) agents.set(agent.name, agent);
    showAgents();
  }

  function showAgents() {
    const list = $("agents");
    list.replaceChildren();
    if (agents.size === 0) { const none = document.createElement("li"); none.className = "none"; none.textContent = "none running"; list.append(none); }
    for (const agent of [...agents.values()].sort((a, b) => a.name.localeCompare(b.name))) {
      const item = document.createElement("li");
      const button = document.createElement("button");
      button.textContent = `${agent.name} (${agent.runtime}${agent.attached ? ", attached" : ""})`;
      button.dataset.agent = agent.name;
      button.classList.toggle("chosen", agent.name === chosenAgent);
      button.onclick = () => { chosenAgent = agent.name; showAgents(); choose(agent.target); };
      item.append(button);
      list.append(item);
    }
  }

  async function choose(target) {
    if (chosen) ws.send(JSON.stringify({ type: "unsubscribe-output", agent: chosen }));
    chosen = target;
    for (const b of document.querySelectorAll("#panes button")) b.classList.toggle("chosen", b.dataset.target === target);
    $("title").textContent = target;
    term.reset();
    const reply = await request({ type: "subscribe-output", agent: target });
    if (!reply.ok) { notice(reply.error); return; }
    term.resize(reply.cols, reply.rows);
    // the reply comes later: if the person went on to type elsewhere (the prompt box),
    // their keys stay there and do not go to the pane
    const typing = document.activeElement;
    if (!typing || typing === document.body || typing.tagName === "BUTTON") term.focus();
    sendSize();
  }

  function sendSize() {
    const size = fit.proposeDimensions();
    if (chosen && size && size.cols && size.rows) ws.send(frame(3, chosen, enc.encode(`${size.cols}:${size.rows}`)));
  }

  term.onData((data) => { if (chosen) ws.send(frame(2, chosen, enc.encode(data))); });
  term.attachCustomKeyEventHandler((e) => {
    if (e.type === "keydown" && e.key === "Tab" && e.shiftKey) { if (chosen) ws.send(frame(2, chosen, enc.encode("\x1b[Z"))); e.preventDefault(); return false; }
    return true;
  });
  let resizeTimer = null;
  window.addEventListener("resize", () => { clearTimeout(resizeTimer); resizeTimer = setTimeout(sendSize, 200); });

  const section = document.querySelector("section");
  section.addEventListener("dragover", (e) => { e.preventDefault(); section.classList.add("drop"); });
  section.addEventListener("dragleave", () => section.classList.remove("drop"));
  section.addEventListener("drop", async (e) => {
    e.preventDefault();
    section.classList.remove("drop");
    for (const file of e.dataTransfer.files) {
      const bytes = new Uint8Array(await file.arrayBuffer());
      ws.send(frame(4, chosen, enc.encode(file.name), Uint8Array.of(0), enc.encode(file.type || "application/octet-stream"), Uint8Array.of(0), bytes));
    }
  });

  $("login").onsubmit = (e) => { e.preventDefault(); opened.then(() => connect($("token").value)); };
  $("refresh").onclick = () => listPanes();
  $("prompt").onsubmit = async (e) => {
    e.preventDefault();
    const agent = chosenAgent || chosen;
    if (!agent) { $("receipt").textContent = "choose an agent first"; return; }
    $("receipt").textContent = `sending to ${agent} ...`;
    const reply = await request({ type: "send-prompt", agent, prompt: $("prompt-text").value });
    const r = reply.receipt;
    $("receipt").textContent = reply.ok
      ? `delivered to ${agent} (confirmed by ${r.confirmed_by}, ${r.enters} Enter${r.enters === 1 ? "" : "s"})`
      : `not delivered to ${agent}: ${reply.error}`;
    if (reply.ok) $("prompt-text").value = "";
  };
  window.tmuxBridgeView = {
    font: FONT, lineHeight: LINE_HEIGHT, opened, request: (message) => request(message),
    send: (data) => ws.send(data), onFrame: (f) => frameListeners.add(f), onEvent: (f) => eventListeners.add(f),
    choose: (target) => { chosenAgent = null; showAgents(); return choose(target); },
  };
  const fromHash = new URLSearchParams(location.hash.slice(1)).get("token");
  if (fromHash) history.replaceState(null, "", location.pathname);
  const saved = fromHash || sessionStorage.getItem("tmux-bridge-token");
  if (saved) opened.then(() => connect(saved));
})();
