// Tiles: every pane of the tmux server at a glance, each a small read-only terminal fed
// by its own subscribe-output (named by the pane's id, so it never clashes with the
// focused view's subscription, named by target), bottom lines shown, with what it is:
// its target and label, the agent in it and its state, a running job, the host of its
// far shell, whether a person is attached. What the tiles show comes from mission.js's
// look at the server (update()); a click or Enter on a tile focuses that pane at full
// size; arrows (or h j k l) move between tiles. The tiles' streams are open only while
// the tiles are shown. A tile whose pane floods it (more than BURST bytes within
// BURST_MS, or waiting to be drawn: a build log, seq) stops streaming and is redrawn from a snapshot twice a second
// until its screen holds still (or GLANCE_MAX_MS passed), then streams again: a glance
// needs the pane's last lines, not every byte drawn, and drawing them all would take the
// CPU the pane's own program needs.
"use strict";
(() => {
  const view = window.tmuxBridgeView;
  const $ = (id) => document.getElementById(id);
  const tiles = new Map(); // pane id -> {element, header, screen, term, pane, live}
  const MAX_HEIGHT = 260; // px of a tile's screen: a taller pane shows its bottom rows
  const BURST = 256 * 1024, BURST_MS = 250, GLANCE_MS = 500, GLANCE_MAX_MS = 5000;
  let started = false; // the first connection chose the tiles (unless a pane was chosen)

  view.onFrame((name, bytes) => {
    const tile = tiles.get(name);
    if (!tile) return;
    if (tile.glance && tile.glance.asked) { glanced(tile, bytes); return; }
    if (!tile.live) return;
    const size = bytes.length;
    tile.backlog += size; // bytes handed to the terminal and not drawn yet
    tile.term.write(bytes, () => { tile.backlog -= size; });
    const now = performance.now();
    if (now - tile.window.since > BURST_MS) tile.window = { since: now, bytes: 0 };
    tile.window.bytes += size;
    if (tile.window.bytes > BURST || tile.backlog > BURST) flooded(tile);
  });
  view.onEvent((message) => {
    const tile = tiles.get(message.agent);
    if (message.type === "size" && tile) sized(tile, message.cols, message.rows);
    else if (message.type === "output-ended" && tile) tile.live = false;
    else if (message.type === "disconnected") for (const each of tiles.values()) { each.live = false; stopGlance(each); }
    // the tiles once the focus terminal has opened (with the font): it measures its cell then, and not in a hidden element
    else if (message.type === "auth" && message.ok && !started) { started = true; view.opened.then(() => { if (view.mode() === "focus" && $("title").textContent === "choose a pane") view.setMode("tiles"); }); }
  });
  view.onMode((mode) => {
    if (mode === "tiles") {
      for (const tile of tiles.values()) { subscribe(tile); fitFont(tile); }
      const first = $("tiles").querySelector(".tile");
      if (first && (!document.activeElement || document.activeElement === document.body)) first.focus();
    }
    else for (const tile of tiles.values()) close(tile); // no stream while nobody looks
  });

  // the panes, agents and jobs as mission.js last saw them; a partial world (the agents
  // alone, or a look not finished) adds and describes tiles but removes none
  function update(world, partial = false) {
    if (!tiles.size) performance.mark("tmux-bridge:tiles");
    const agents = new Map((world.agents || []).map((agent) => [agent.pane, agent]));
    const seen = new Set();
    const added = [];
    for (const pane of world.panes || []) {
      seen.add(pane.pane);
      if (pane.guessed && tiles.has(pane.pane)) continue; // known better from list-panes
      let tile = tiles.get(pane.pane);
      if (!tile) { tile = add(pane); added.push(tile); }
      const jobs = (world.jobs || []).filter((job) => job.state === "running" && (job.pane === pane.pane || job.target === pane.target));
      describe(tile, pane, agents.get(pane.pane), jobs);
      if (view.mode() === "tiles") subscribe(tile);
    }
    // the terminals last, once the font is there (xterm.js measures its cell on open):
    // every subscription is on its way while they are built; a frame that comes first
    // waits in the terminal's buffer
    if (added.length) view.opened.then(() => { for (const tile of added) if (tiles.get(tile.pane.pane) === tile) tile.term.open(tile.screen); });
    if (!partial) for (const id of [...tiles.keys()]) if (!seen.has(id)) remove(id);
  }

  // a tile for ``pane``; its terminal is opened by update() once every new tile asked for its stream
  function add(pane) {
    const element = document.createElement("article");
    element.className = "tile";
    element.tabIndex = 0;
    element.dataset.pane = pane.pane;
    const header = document.createElement("header");
    const screen = document.createElement("div");
    screen.className = "screen";
    element.append(header, screen);
    $("tiles").append(element);
    const term = new Terminal({ fontSize: 7, fontFamily: view.font, lineHeight: view.lineHeight, disableStdin: true, scrollback: 0, cursorBlink: false });
    const tile = { element, header, screen, term, pane, live: false, cols: 80, rows: 24, window: { since: 0, bytes: 0 }, backlog: 0, glance: null };
    tiles.set(pane.pane, tile);
    element.onclick = () => focus(tile);
    element.onkeydown = (e) => keys(e, tile);
    return tile;
  }

  async function subscribe(tile) {
    if (tile.live || tile.glance) return;
    tile.live = true;
    const reply = await view.request({ type: "subscribe-output", agent: tile.pane.pane, history: 0 });
    if (reply.ok) sized(tile, reply.cols, reply.rows);
    else tile.live = false;
  }

  // the pane floods its tile: no stream; a snapshot now and then until its screen holds still
  function flooded(tile) {
    close(tile);
    tile.glance = { began: performance.now(), last: null, asked: false, timer: setTimeout(() => glance(tile), GLANCE_MS) };
  }

  async function glance(tile) {
    const state = tile.glance;
    if (!state) return;
    state.asked = true; // the next frame of this pane is the snapshot
    const reply = await view.request({ type: "subscribe-output", agent: tile.pane.pane, history: 0, stream: false });
    if (!reply.ok) { state.asked = false; stopGlance(tile); return; }
    if (reply.cols && reply.rows) sized(tile, reply.cols, reply.rows);
  }

  function glanced(tile, bytes) {
    const state = tile.glance;
    if (bytes[0] !== 0x1b || bytes[1] !== 0x63) return; // a stream's leftover: not the snapshot (ESC c)
    state.asked = false;
    tile.term.write(bytes); // a snapshot redraws the whole screen
    const still = same(bytes, state.last) || performance.now() - state.began > GLANCE_MAX_MS;
    state.last = bytes.slice();
    if (still) { stopGlance(tile); if (view.mode() === "tiles") subscribe(tile); }
    else state.timer = setTimeout(() => glance(tile), GLANCE_MS);
  }

  function same(a, b) {
    if (!b || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
    return true;
  }

  function stopGlance(tile) {
    if (!tile.glance) return;
    clearTimeout(tile.glance.timer);
    tile.glance = null;
  }

  function close(tile) {
    if (tile.glance && view.mode() !== "tiles") stopGlance(tile);
    if (!tile.live) return;
    tile.live = false;
    view.send(JSON.stringify({ type: "unsubscribe-output", agent: tile.pane.pane }));
  }

  // the pane's size, in a font small enough that its width fits the tile (the bottom
  // rows shown when its height does not)
  function sized(tile, cols, rows) {
    tile.cols = cols;
    tile.rows = rows;
    view.resizeInOrder(tile.term, cols, rows, () => fitFont(tile));
  }

  function fitFont(tile) {
    const width = tile.screen.clientWidth;
    if (!width) return;
    const size = Math.max(4, Math.min(view.fontSize() / 2, Math.floor((width / (tile.cols * 0.61)) * 2) / 2));
    if (tile.term.options.fontSize !== size) tile.term.options.fontSize = size;
    tile.screen.style.height = `${Math.min(MAX_HEIGHT, Math.ceil(tile.rows * size * view.lineHeight) + 4)}px`;
  }

  function badge(kind, text, title) {
    const span = document.createElement("span");
    span.className = kind === "target" ? "target" : `badge ${kind}`;
    span.textContent = text;
    if (title) span.title = title;
    return span;
  }

  function describe(tile, pane, agent, jobs) {
    tile.pane = pane;
    const parts = [badge("target", pane.target)];
    if (pane.label) parts.push(badge("label", pane.label));
    if (agent) parts.push(badge("agent", `${agent.name} (${agent.runtime})`), badge(`state ${agent.state}`, agent.state, "the agent's state"));
    for (const job of jobs) parts.push(badge("job", `job ${job.job} running`, job.command));
    const far = pane.far && pane.far.host ? pane.far : null;
    if (far) parts.push(badge("host", `@${far.user ? far.user + "@" : ""}${far.host}`, "the far shell"));
    if (pane.attached) parts.push(badge("attached", "person attached"));
    tile.header.replaceChildren(...parts);
    tile.element.classList.toggle("needs", Boolean(agent && agent.state === "needs_person"));
    tile.element.setAttribute("aria-label", parts.map((p) => p.textContent).join(", "));
  }

  function remove(id) {
    const tile = tiles.get(id);
    tiles.delete(id);
    stopGlance(tile);
    close(tile);
    tile.term.dispose();
    tile.element.remove();
  }

  function focus(tile) {
    view.choose(tile.pane.target);
  }

  // arrows and h j k l between tiles, by their places on the grid
  const MOVES = { ArrowLeft: -1, h: -1, ArrowRight: 1, l: 1, ArrowUp: "up", k: "up", ArrowDown: "down", j: "down" };
  function keys(e, tile) {
    if (e.key === "Enter") { e.preventDefault(); focus(tile); return; }
    const move = MOVES[e.key];
    if (move === undefined || e.ctrlKey || e.metaKey || e.altKey) return;
    e.preventDefault();
    const all = [...$("tiles").querySelectorAll(".tile")];
    const at = all.indexOf(tile.element);
    const perRow = Math.max(1, all.filter((t) => t.offsetTop === all[0].offsetTop).length);
    const step = move === "up" ? -perRow : move === "down" ? perRow : move;
    const next = all[Math.max(0, Math.min(all.length - 1, at + step))];
    if (next) next.focus();
  }

  window.addEventListener("resize", () => { for (const tile of tiles.values()) fitFont(tile); });
  window.tmuxBridgeTiles = { update, first: () => $("tiles").querySelector(".tile") };
})();
