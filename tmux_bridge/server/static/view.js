// The browser view of tmux-bridge serve: the WebSocket adapter protocol (/ws) driving
// an xterm.js terminal, the focused pane. Frames: type + name + 0x00 + payload (0x01
// output, 0x02 keys, 0x03 "cols:rows", 0x04 name 0x00 mime 0x00 bytes). The connection
// comes back by itself when it drops; tiles.js (every pane at a glance) and mission.js
// (the side lists and notices) build on what this file exposes as window.tmuxBridgeView.
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
  const FONT_SIZES = [9, 10, 11, 12, 13, 14, 16, 18, 20, 24];
  let fontSize = Number(localStorage.getItem("tmux-bridge-font-size")) || 14;
  // The focused pane's terminal is a new one for every subscription (a pane chosen, the
  // connection back): what xterm.js was given of the last pane and not yet parsed goes
  // with the old one, never drawn over the new pane. Output waiting to be parsed is
  // bounded (BEHIND bytes): past it, the stream is left, and once the terminal has drawn
  // what it holds, the pane is redrawn from a fresh snapshot and streams again (a flood
  // would otherwise keep the view seconds behind the pane, growing while it lasts).
  const BEHIND = 512 * 1024;
  let term = null, fit = null;
  let backlog = 0; // bytes handed to the terminal and not parsed yet
  let hits = [], hit = -1, searched = ""; // the search on it (see search())
  let live = false; // the chosen pane's stream is being drawn (its subscription answered)
  // xterm.js measures its cell once, on open: the font must be there by then
  const fonts = Promise.all(["14px", "bold 14px"].map((f) => document.fonts.load(`${f} "tmux-bridge DejaVu Sans Mono"`)))
    .catch(() => null);
  function newTerminal() {
    const old = term;
    const made = new Terminal({
      convertEol: false, scrollback: 10000, fontSize, fontFamily: FONT, lineHeight: LINE_HEIGHT,
      allowProposedApi: true, disableStdin: role === "read",
    });
    fit = new FitAddon.FitAddon();
    made.loadAddon(fit);
    made.loadAddon(new Unicode11Addon.Unicode11Addon());
    made.unicode.activeVersion = "11";
    made.onData((data) => { if (chosen && role === "full") send(frame(2, chosen, enc.encode(data))); });
    made.attachCustomKeyEventHandler((e) => {
      if (e.type === "keydown" && e.ctrlKey && (e.key === "]" || e.code === "BracketRight")) { e.preventDefault(); made.blur(); $("title").focus(); return false; }
      if (e.type === "keydown" && e.key === "Tab" && e.shiftKey) { if (chosen) send(frame(2, chosen, enc.encode("\x1b[Z"))); e.preventDefault(); return false; }
      return true;
    });
    term = made;
    backlog = 0;
    hits = []; hit = -1; searched = "";
    if (old) old.dispose();
    return fonts.then(() => { if (term === made) made.open($("terminal")); });
  }
  let ws = null, chosen = null, chosenAgent = null, nextId = 1, role = null, mode = "focus";
  let token = null, retries = 0, retryTimer = null, rtt = null, lagged = null;
  let stale = false; // the open pane's subscription was lost with a connection
  let panesByLook = false; // mission.js lists the panes for the side list too
  const opened = newTerminal(); // the first pane's, until one is chosen
  const agents = new Map();
  const pending = new Map();
  // for tiles.js and mission.js: every output frame, every event, the view's changes
  const frameListeners = new Set();
  const eventListeners = new Set();
  const modeListeners = new Set();

  const frame = (type, name, ...parts) => {
    const bytes = [Uint8Array.of(type), enc.encode(name), Uint8Array.of(0), ...parts];
    const out = new Uint8Array(bytes.reduce((n, b) => n + b.length, 0));
    let at = 0;
    for (const b of bytes) { out.set(b, at); at += b.length; }
    return out;
  };
  // A new size takes effect after the output that came before it: xterm.js parses what it
  // is given later (on a timer), and a resize done at once would lay out a snapshot drawn
  // at the old size in the new one (its top rows scrolled away, the cursor on the wrong row).
  const resizeInOrder = (terminal, cols, rows, then) =>
    terminal.write(new Uint8Array(0), () => { terminal.resize(cols, rows); if (then) then(); });
  const open = () => ws && ws.readyState === WebSocket.OPEN;
  const send = (data) => { if (open()) ws.send(data); };
  // a request's reply; {ok: false} at once when not connected, or when the connection drops
  const request = (message) => new Promise((resolve) => {
    if (!open()) { resolve({ ok: false, error: "not connected" }); return; }
    const id = String(nextId++);
    const sent = performance.now();
    pending.set(id, (reply) => { rtt = performance.now() - sent; showLag(); resolve(reply); });
    ws.send(JSON.stringify({ id, ...message }));
  });
  const notice = (text) => { $("notice").textContent = text; };
  const status = (text, kind) => { $("status").textContent = text; $("status").className = kind || ""; };

  function showLag() {
    const parts = rtt === null ? [] : [`${Math.round(rtt)} ms`];
    const recent = lagged && performance.now() - lagged.at < 30000;
    if (recent) parts.push(`${lagged.agent} lagged: redrawn`);
    $("lag").textContent = parts.join(" · ");
    $("lag").classList.toggle("warn", Boolean(recent));
  }

  function connect(given) {
    token = given;
    sessionStorage.setItem("tmux-bridge-token", token);
    clearTimeout(retryTimer);
    ws = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`);
    ws.binaryType = "arraybuffer";
    const mine = ws;
    ws.onopen = () => { performance.mark("tmux-bridge:open"); mine.send(JSON.stringify({ type: "auth", token })); };
    ws.onclose = (event) => { if (mine === ws) dropped(event.code); };
    ws.onmessage = (event) => typeof event.data === "string" ? onJson(JSON.parse(event.data)) : onBinary(new Uint8Array(event.data));
  }

  // the connection dropped: every pending request fails, and (unless the token was
  // refused) a new connection is tried, sooner at first, then every 10 s at most
  function dropped(code) {
    for (const resolve of pending.values()) resolve({ ok: false, error: "disconnected" });
    pending.clear();
    for (const listener of eventListeners) listener({ type: "disconnected" });
    if (code === 4401 || !token) { status("disconnected", "bad"); return; }
    const delay = Math.min(10, 0.5 * 2 ** retries);
    retries += 1;
    status(`reconnecting in ${delay} s (try ${retries})`, "bad");
    retryTimer = setTimeout(() => connect(token), delay * 1000);
  }

  function onBinary(data) {
    const zero = data.indexOf(0, 1);
    if (data[0] !== 1) return;
    const name = dec.decode(data.subarray(1, zero));
    for (const listener of frameListeners) listener(name, data.subarray(zero + 1));
    if (name !== chosen || !live) return;
    if (backlog > BEHIND) { fellBehind(); return; }
    const bytes = data.subarray(zero + 1), mine = term;
    backlog += bytes.length;
    term.write(bytes, () => { if (term === mine) backlog -= bytes.length; });
  }

  // the terminal is BEHIND bytes behind the pane: no stream until it has drawn them, then
  // a fresh snapshot (with the scrollback) and the stream again
  function fellBehind() {
    const target = chosen, mine = term;
    live = false;
    send(JSON.stringify({ type: "unsubscribe-output", agent: target }));
    lagged = { agent: target, at: performance.now() };
    showLag();
    mine.write(new Uint8Array(0), () => {
      if (term === mine && chosen === target && mode === "focus" && !stale) subscribe(target);
    });
  }

  async function subscribe(target) {
    const mine = term;
    const reply = await request({ type: "subscribe-output", agent: target });
    if (term !== mine || chosen !== target) return false;
    if (!reply.ok) { notice(reply.error); return false; }
    live = true; // the snapshot comes next, then the stream
    resizeInOrder(term, reply.cols, reply.rows);
    return true;
  }

  function onJson(message) {
    if (message.id && pending.has(message.id)) { pending.get(message.id)(message); pending.delete(message.id); return; }
    if (message.type === "auth") authenticated(message);
    for (const listener of eventListeners) listener(message);
    if (message.type === "agent-added" || message.type === "agent-updated") { agents.set(message.agent.name, message.agent); showAgents(); }
    else if (message.type === "agent-removed") { agents.delete(message.name); showAgents(); }
    else if (message.type === "lagging") { lagged = { agent: message.agent, at: performance.now() }; showLag(); notice(`${message.agent}: ${message.reason}; redrawn from a fresh snapshot`); }
    else if ((message.type === "resize" || message.type === "size") && message.agent === chosen) resizeInOrder(term, message.cols, message.rows);
    else if (message.type === "upload") notice(`uploaded ${message.path} (${message.pasted})`);
    else if (message.type === "error") notice(message.error);
  }

  function authenticated(message) {
    if (!message.ok) { token = null; status(message.error, "bad"); return; }
    retries = 0;
    performance.mark("tmux-bridge:auth");
    role = message.role;
    const reading = role === "read";
    status(`connected (${reading ? "read-only" : "full"})`, "good");
    $("role").hidden = !reading;
    document.body.classList.toggle("read-only", reading);
    term.options.disableStdin = reading;
    if (!panesByLook) listPanes(); // else mission.js's look lists them (one list-panes, not two)
    followAgents();
    // the open pane again (if the tiles are shown, when it is opened next)
    if (chosen && mode === "focus") choose(chosen);
    else stale = Boolean(chosen);
  }

  async function listPanes() {
    const reply = await request({ type: "list-panes" });
    showPanes(reply.panes || []);
  }

  function showPanes(panes) {
    const list = $("panes");
    list.replaceChildren();
    for (const pane of panes) {
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

  function setMode(next) {
    // the pane open at full size streams only while it is shown (again when it is)
    if (mode === "focus" && next === "tiles" && chosen && !stale) {
      send(JSON.stringify({ type: "unsubscribe-output", agent: chosen }));
      stale = true;
      live = false;
    }
    mode = next;
    $("tiles").hidden = next !== "tiles";
    $("focus").hidden = next !== "focus";
    $("show-tiles").textContent = next === "tiles" ? "Focus" : "Tiles";
    for (const listener of modeListeners) listener(next);
    if (next === "focus" && stale) { stale = false; choose(chosen); }
    else if (next === "focus") requestAnimationFrame(sendSize);
  }

  async function choose(target) {
    if (chosen && chosen !== target) send(JSON.stringify({ type: "unsubscribe-output", agent: chosen }));
    chosen = target;
    stale = false; // subscribed below
    if (mode !== "focus") setMode("focus");
    for (const b of document.querySelectorAll("#panes button")) b.classList.toggle("chosen", b.dataset.target === target);
    $("title").textContent = target;
    live = false;
    newTerminal();
    if (!(await subscribe(target))) return;
    // the reply comes later: if the person went on to type elsewhere (the prompt box),
    // their keys stay there and do not go to the pane
    const typing = document.activeElement;
    if (role === "full" && (!typing || typing === document.body || typing.tagName === "BUTTON")) term.focus();
    sendSize();
  }

  function sendSize() {
    if (role !== "full" || !chosen || mode !== "focus") return;
    const size = fit.proposeDimensions();
    if (size && size.cols && size.rows) send(frame(3, chosen, enc.encode(`${size.cols}:${size.rows}`)));
  }

  function setFont(size) {
    fontSize = size;
    localStorage.setItem("tmux-bridge-font-size", String(size));
    term.options.fontSize = size;
    sendSize();
    for (const listener of modeListeners) listener(mode);
  }
  const stepFont = (step) => {
    const at = FONT_SIZES.findIndex((s) => s >= fontSize);
    setFont(FONT_SIZES[Math.max(0, Math.min(FONT_SIZES.length - 1, (at < 0 ? FONT_SIZES.length - 1 : at) + step))]);
  };

  // --- search and copy, on the focused pane's terminal ---------------------------------
  function search(text, step) {
    const buffer = term.buffer.active;
    if (text !== searched) {
      searched = text;
      hits = [];
      hit = -1;
      const wanted = text.toLowerCase();
      for (let row = 0; text && row < buffer.length; row++) {
        const line = buffer.getLine(row).translateToString(true).toLowerCase();
        for (let col = line.indexOf(wanted); col >= 0; col = line.indexOf(wanted, col + 1)) hits.push([row, col]);
      }
    }
    if (!hits.length) { term.clearSelection(); $("search-found").textContent = text ? "not found" : ""; return; }
    hit = (hit + step + hits.length) % hits.length;
    const [row, col] = hits[hit];
    term.scrollToLine(Math.max(0, row - Math.floor(term.rows / 2)));
    term.select(col, row, text.length);
    $("search-found").textContent = `${hit + 1} of ${hits.length}`;
  }

  async function copy() {
    let text = term.getSelection();
    if (!text) {
      const buffer = term.buffer.active;
      const rows = [];
      for (let row = buffer.viewportY; row < buffer.viewportY + term.rows; row++) rows.push(buffer.getLine(row)?.translateToString(true) ?? "");
      text = rows.join("\n").replace(/\n+$/, "\n");
    }
    try { await navigator.clipboard.writeText(text); } catch {
      const box = document.createElement("textarea");
      box.value = text;
      document.body.append(box);
      box.select();
      document.execCommand("copy");
      box.remove();
    }
    notice(`copied ${text.length} characters${term.hasSelection() ? " (the selection)" : " (the screen)"}`);
  }

  let resizeTimer = null;
  window.addEventListener("resize", () => { clearTimeout(resizeTimer); resizeTimer = setTimeout(sendSize, 200); });

  const section = $("focus");
  section.addEventListener("dragover", (e) => { e.preventDefault(); section.classList.add("drop"); });
  section.addEventListener("dragleave", () => section.classList.remove("drop"));
  section.addEventListener("drop", async (e) => {
    e.preventDefault();
    section.classList.remove("drop");
    if (role !== "full") { notice("this token may watch only: no uploads"); return; }
    for (const file of e.dataTransfer.files) {
      const bytes = new Uint8Array(await file.arrayBuffer());
      send(frame(4, chosen, enc.encode(file.name), Uint8Array.of(0), enc.encode(file.type || "application/octet-stream"), Uint8Array.of(0), bytes));
    }
  });

  $("login").onsubmit = (e) => { e.preventDefault(); opened.then(() => connect($("token").value)); };
  $("refresh").onclick = () => listPanes();
  $("show-tiles").onclick = () => setMode(mode === "tiles" ? "focus" : "tiles");
  $("font-up").onclick = () => stepFont(1);
  $("font-down").onclick = () => stepFont(-1);
  $("show-keys").onclick = () => { $("keys").hidden = !$("keys").hidden; };
  $("copy").onclick = () => copy();
  $("search").onsubmit = (e) => { e.preventDefault(); search($("search-text").value, 1); };
  $("search-prev").onclick = () => search($("search-text").value, -1);
  $("search-text").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && e.shiftKey) { e.preventDefault(); search(e.target.value, -1); }
    else if (e.key === "Escape") { e.target.blur(); if (role === "full") term.focus(); }
  });
  $("title").tabIndex = -1;
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

  // keyboard first: the page's keys, whenever the keyboard is not in the terminal or a box
  const KEYS = {
    t: () => setMode(mode === "tiles" ? "focus" : "tiles"),
    "/": () => { if (mode !== "focus") setMode("focus"); $("search-text").focus(); $("search-text").select(); },
    c: () => copy(),
    "+": () => stepFont(1), "=": () => stepFont(1), "-": () => stepFont(-1),
    i: () => { if (mode !== "focus") setMode("focus"); if (role === "full") term.focus(); },
    "?": () => { $("keys").hidden = !$("keys").hidden; },
    Escape: () => { $("keys").hidden = true; },
  };
  document.addEventListener("keydown", (e) => {
    const typing = e.target.closest && e.target.closest("input, textarea, .xterm");
    const action = KEYS[e.key];
    if (!typing && action && !e.ctrlKey && !e.metaKey && !e.altKey) { e.preventDefault(); action(); }
  });

  window.tmuxBridgeView = {
    font: FONT, lineHeight: LINE_HEIGHT, opened, request: (message) => request(message),
    send, onFrame: (f) => frameListeners.add(f), onEvent: (f) => eventListeners.add(f),
    onMode: (f) => modeListeners.add(f), mode: () => mode, setMode, fontSize: () => fontSize,
    role: () => role, backlog: () => backlog, terminal: () => term, notice, resizeInOrder, showPanes, lookAfterPanes: () => { panesByLook = true; },
    choose: (target) => { chosenAgent = null; showAgents(); return choose(target); },
  };
  const fromHash = new URLSearchParams(location.hash.slice(1)).get("token");
  if (fromHash) history.replaceState(null, "", location.pathname);
  const saved = fromHash || sessionStorage.getItem("tmux-bridge-token");
  // Connected once the page's other scripts (tiles.js, mission.js) have run, so that every
  // listener hears the `auth` event (a script slow to arrive would miss it: no look at the
  // server, no tiles); while the font loads: the terminals open once it is there.
  const start = () => { if (saved) connect(saved); };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
