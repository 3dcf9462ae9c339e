// Tiles: every pane of the tmux server at a glance, each a small read-only terminal fed
// by its own subscribe-output (named by the pane's id, so it never clashes with the
// focused view's subscription, named by target), with what it is: its target and label,
// the agent in it and its state, the host of its far shell, whether a person is attached.
// A click (or Enter) on a tile focuses that pane at full size; "t" toggles the tiles.
"use strict";
(() => {
  const view = window.tmuxBridgeView;
  const $ = (id) => document.getElementById(id);
  const tiles = new Map(); // pane id -> {element, header, term, pane}
  let shown = false;

  view.onFrame((name, bytes) => { const tile = tiles.get(name); if (tile) tile.term.write(bytes); });
  view.onEvent((message) => {
    if (message.type === "size") { const tile = tiles.get(message.agent); if (tile) tile.term.resize(message.cols, message.rows); }
    if (!shown) return;
    if (message.type === "auth" && message.ok) refresh();
    else if (String(message.type).startsWith("agent-")) refresh();
  });

  async function refresh() {
    const [listed, found] = await Promise.all([view.request({ type: "list-panes" }), view.request({ type: "list-agents" })]);
    const agents = new Map((found.agents || []).map((agent) => [agent.pane, agent]));
    const seen = new Set();
    for (const pane of listed.panes || []) {
      seen.add(pane.pane);
      const tile = tiles.get(pane.pane) || add(pane);
      describe(tile, pane, agents.get(pane.pane));
    }
    for (const id of [...tiles.keys()]) if (!seen.has(id)) remove(id);
  }

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
    term.open(screen);
    const tile = { element, header, term, pane };
    tiles.set(pane.pane, tile);
    element.onclick = () => focus(tile);
    element.onkeydown = (e) => { if (e.key === "Enter") focus(tile); };
    view.request({ type: "subscribe-output", agent: pane.pane }).then((reply) => { if (reply.ok) term.resize(reply.cols, reply.rows); });
    return tile;
  }

  function describe(tile, pane, agent) {
    tile.pane = pane;
    const parts = [["target", pane.target]];
    if (pane.label) parts.push(["label", pane.label]);
    if (agent) parts.push(["agent", `${agent.name} (${agent.runtime})`], [`state ${agent.state}`, agent.state]);
    const host = pane.far && pane.far.host ? pane.far.host : null;
    if (host) parts.push(["host", `@${host}`]);
    if (pane.attached) parts.push(["attached", "attached"]);
    tile.header.replaceChildren(...parts.map(([kind, text]) => {
      const span = document.createElement("span");
      span.className = kind === "target" ? "target" : `badge ${kind}`;
      span.textContent = text;
      return span;
    }));
  }

  function remove(id) {
    const tile = tiles.get(id);
    tiles.delete(id);
    view.send(JSON.stringify({ type: "unsubscribe-output", agent: id }));
    tile.term.dispose();
    tile.element.remove();
  }

  function show(on) {
    shown = on;
    $("tiles").hidden = !on;
    $("focus").hidden = on;
    $("show-tiles").textContent = on ? "Focus" : "Tiles";
    if (on) refresh();
    else for (const id of [...tiles.keys()]) remove(id); // no stream while nobody looks
  }

  function focus(tile) {
    show(false);
    view.choose(tile.pane.target);
  }

  $("show-tiles").onclick = () => show(!shown);
  document.addEventListener("keydown", (e) => {
    const typing = e.target.closest && e.target.closest("input, textarea, .xterm");
    if (e.key === "t" && !typing && !e.ctrlKey && !e.metaKey && !e.altKey) { e.preventDefault(); show(!shown); }
  });
})();
