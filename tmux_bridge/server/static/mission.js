// Mission control's side: a look at the server every 2 s while connected (and at once on
// an agent or job event: it subscribes to both): the panes, the agents and their states, the jobs, the
// messages between agents. The tiles are drawn from it (tiles.js), the messages and
// jobs listed beside them, and what a person must act on raised as a notice: an agent
// that needs a person, a job that ended. Notices stay until dismissed; their count is
// in the tab's title. "n" goes to them.
"use strict";
(() => {
  const view = window.tmuxBridgeView;
  const tiles = window.tmuxBridgeTiles;
  const $ = (id) => document.getElementById(id);
  const TICK = 2000, HIDDEN_TICK = 10000; // ms between looks, and while the tab is hidden
  const GONE = new Set(["not connected", "disconnected"]);
  let timer = null, looking = false, again = false, before = null, raised = 0;
  let last = { panes: [], agents: [], jobs: [], messages: [] }; // the last look
  const endedRaised = new Set();
  view.lookAfterPanes(); // the side list of panes comes from this look

  view.onEvent((message) => {
    const type = String(message.type);
    if (type === "auth" && message.ok) { view.request({ type: "subscribe-jobs" }); look(); }
    else if (type === "disconnected") clearTimeout(timer);
    else if (type === "job-ended" && message.job) { ended(message.job); look(); }
    else if (type.startsWith("agent-") || type.startsWith("job")) look();
  });

  async function look() {
    if (looking) { again = true; return; }
    looking = true;
    clearTimeout(timer);
    let connected = true;
    try {
      const asked = ["list-panes", "list-agents", "list-jobs", "list-messages"].map((type) => view.request({ type }));
      // the tiles as soon as the agents or the panes are known (the rest as last seen):
      // the first paint waits for neither the other lists nor list-panes, the slowest
      asked[1].then((agents) => {
        if (!agents.ok) return;
        const theirs = agents.agents.map((a) => ({ pane: a.pane, target: a.target, attached: a.attached, guessed: true }));
        tiles.update({ ...last, agents: agents.agents, panes: theirs }, true);
      });
      asked[0].then((panes) => { if (panes.ok) { tiles.update({ ...last, panes: panes.panes }, true); view.showPanes(panes.panes); } });
      const [panes, agents, jobs, messages] = await Promise.all(asked);
      connected = !GONE.has(panes.error);
      if (!connected) return;
      const world = { panes: panes.panes || [], agents: agents.agents || [], jobs: jobs.jobs || [], messages: messages.messages || [] };
      last = world;
      raise(world);
      tiles.update(world);
      showJobs(world.jobs);
      showMessages(world.messages, messages.ok ? null : messages.error);
    } finally {
      looking = false;
      if (again) { again = false; look(); }
      else if (connected) timer = setTimeout(look, document.hidden ? HIDDEN_TICK : TICK);
    }
  }

  // what changed since the last look that a person must act on
  function raise(world) {
    const states = new Map(world.agents.map((agent) => [agent.name, agent.state]));
    const jobs = new Map(world.jobs.map((job) => [job.job, job]));
    for (const agent of world.agents) {
      const was = before ? before.states.get(agent.name) : undefined;
      if (agent.state === "needs_person" && was !== "needs_person") notify(`${agent.name} (${agent.runtime}) needs you`, agent.target, "needs");
    }
    if (before) {
      for (const [id, job] of jobs) {
        const was = before.jobs.get(id);
        if (was && was.state === "running" && job.state !== "running") ended(job);
      }
    }
    before = { states, jobs };
  }

  // a job that ended, raised once (from the server's job-ended event or from a look)
  function ended(job) {
    if (endedRaised.has(job.job)) return;
    endedRaised.add(job.job);
    const how = job.exit_status === null ? job.state : `exit ${job.exit_status}`;
    notify(`job ${job.job} ended (${how}) in ${job.target}: ${job.command}`, job.target, "job");
  }

  function notify(text, target, kind) {
    const list = $("notices");
    list.querySelector(".none")?.remove();
    const item = document.createElement("li");
    item.className = `notice ${kind}`;
    const words = document.createElement("span");
    words.textContent = `${new Date().toLocaleTimeString()} ${text}`;
    const go = document.createElement("button");
    go.type = "button";
    go.textContent = "show";
    go.title = `focus ${target}`;
    go.onclick = () => view.choose(target);
    const done = document.createElement("button");
    done.type = "button";
    done.textContent = "\u00d7";
    done.title = "dismiss";
    done.setAttribute("aria-label", "dismiss");
    done.onclick = () => { item.remove(); count(-1); };
    item.append(words, go, done);
    list.prepend(item);
    count(1);
  }

  function count(step) {
    raised += step;
    $("notice-count").textContent = raised ? String(raised) : "";
    document.title = raised ? `(${raised}) tmux-bridge` : "tmux-bridge";
    if (!raised && !$("notices").children.length) $("notices").append(none());
  }

  function none(text = "none") {
    const item = document.createElement("li");
    item.className = "none";
    item.textContent = text;
    return item;
  }

  function line(parts, title) {
    const item = document.createElement("li");
    for (const [kind, text] of parts) {
      const span = document.createElement("span");
      span.className = kind;
      span.textContent = text;
      item.append(span, " ");
    }
    if (title) item.title = title;
    return item;
  }

  function showJobs(jobs) {
    const items = jobs.slice().reverse().map((job) => {
      const how = job.state === "running" ? "running" : job.exit_status === null ? job.state : `${job.state}, exit ${job.exit_status}`;
      const item = line([["id", job.job], [`state ${job.state}`, how], ["where", job.target], ["what", job.command]], job.command);
      item.dataset.job = job.job;
      return item;
    });
    $("jobs").replaceChildren(...(items.length ? items : [none()]));
  }

  function showMessages(messages, error) {
    const items = messages.slice().reverse().map((m) => {
      const item = line([["id", `#${m.id}`], ["who", `${m.sender}${m.sender_verified ? "" : " (unverified)"} \u2192 ${m.recipient}`], [`state ${m.state}`, m.state], ["what", m.body.length > 80 ? m.body.slice(0, 79) + "\u2026" : m.body]], m.body);
      item.dataset.message = String(m.id);
      return item;
    });
    $("messages").replaceChildren(...(items.length ? items : [none(error || "none")]));
  }

  document.addEventListener("keydown", (e) => {
    const typing = e.target.closest && e.target.closest("input, textarea, .xterm");
    if (e.key === "n" && !typing && !e.ctrlKey && !e.metaKey && !e.altKey) {
      e.preventDefault();
      const first = $("notices").querySelector("button");
      (first || $("notices")).focus();
    }
  });
  document.addEventListener("visibilitychange", () => { if (!document.hidden && view.role()) look(); });
})();
