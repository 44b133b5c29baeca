// The replay player (docs/replay.md), framed (sandboxed) by the report's page. The page sends
// the events and the marks (console errors, failed requests, clicks) by postMessage, and asks it
// to seek; rrweb's Replayer plays the recording in a frame of its own without scripts, under
// this page's policy, which runs nothing but the player's own files.
(() => {
  "use strict";
  const root = document.getElementById("player");
  const SPEEDS = [1, 2, 4, 8];
  const SETTLE_MS = 100;
  let replayer = null;
  let start = 0;
  let total = 0;
  let playing = false;
  let recorded = { width: 0, height: 0 }; // the recorded page's viewport (rrweb's meta event)

  const el = (tag, attributes = {}, ...children) => {
    const element = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes)) {
      if (name === "text") element.textContent = value;
      else if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
      else element.setAttribute(name, value);
    }
    element.append(...children);
    return element;
  };
  const clock = (ms) => {
    const seconds = Math.max(0, Math.round(ms / 1000));
    return Math.floor(seconds / 60) + ":" + String(seconds % 60).padStart(2, "0");
  };

  const stage = el("div", { class: "stage" });
  const playButton = el("button", { type: "button", class: "play", "aria-label": "Play" }, "Play");
  const timeline = el("input", { type: "range", min: "0", max: "0", step: "10", value: "0", "aria-label": "Time" });
  const marks = el("div", { class: "marks" });
  const shown = el("span", { class: "time", role: "timer", "aria-live": "off" }, "0:00 / 0:00");
  const speed = el("select", { "aria-label": "Speed" }, ...SPEEDS.map((value) => el("option", { value: String(value) }, value + "×")));
  const skip = el("input", { type: "checkbox", id: "skip", checked: "" });
  root.append(stage, el("div", { class: "controls" }, playButton,
    el("div", { class: "track" }, timeline, marks), shown, speed,
    el("label", { for: "skip" }, skip, " Skip inactivity")));

  const now = () => (replayer ? Math.min(total, replayer.getCurrentTime()) : 0);
  function show() {
    timeline.value = String(now());
    shown.textContent = clock(now()) + " / " + clock(total);
    playButton.textContent = playing ? "Pause" : "Play";
    playButton.setAttribute("aria-label", playing ? "Pause" : "Play");
    document.body.dataset.offset = String(Math.round(now()));
  }
  function seek(offset, play) {
    if (!replayer) return;
    offset = Math.max(0, Math.min(total, offset));
    if (play) replayer.play(offset);
    else replayer.pause(offset);
    playing = play;
    show();
  }
  const tick = () => { if (playing) show(); requestAnimationFrame(tick); };

  // The recording scaled to the stage's width (never above 100 %), the stage as tall as the
  // scaled recording, and the page that frames the player told how tall the whole player is
  // (stage and controls), so that it frames all of it at any width. Sized from the recording's
  // own viewport, not from rrweb's frame, which rrweb sizes only once it has drawn.
  function fit() {
    const wrapper = stage.querySelector(".replayer-wrapper");
    const frame = replayer && replayer.iframe;
    const width = recorded.width || Number(frame && frame.width) || stage.clientWidth;
    const height = recorded.height || Number(frame && frame.height) || 400;
    const scale = Math.min(1, stage.clientWidth / width);
    if (wrapper) {
      wrapper.style.transform = "scale(" + scale + ")";
      wrapper.style.transformOrigin = "top left";
    }
    stage.style.height = Math.round(height * scale) + "px";
    document.body.dataset.scale = scale.toFixed(3);
    window.parent.postMessage({ type: "svc-replay:size", height: Math.ceil(root.scrollHeight) }, location.origin);
  }

  function load(events, given) {
    if (replayer) { replayer.pause(); replayer.destroy && replayer.destroy(); stage.replaceChildren(); }
    replayer = new rrwebReplay.Replayer(events, {
      root: stage, skipInactive: skip.checked, showWarning: false, mouseTail: false,
      speed: Number(speed.value), UNSAFE_replayCanvas: false,
    });
    const viewport = events.find((event) => event && event.type === 4 && event.data);
    recorded = viewport ? { width: Number(viewport.data.width) || 0, height: Number(viewport.data.height) || 0 } : { width: 0, height: 0 };
    replayer.on("resize", fit);
    const meta = replayer.getMetaData();
    start = meta.startTime;
    total = meta.totalTime;
    timeline.max = String(total);
    marks.replaceChildren(...(given || []).filter((mark) => mark.timestamp >= start && mark.timestamp <= start + total)
      .map((mark) => el("button", {
        type: "button", class: "mark mark-" + mark.kind, title: mark.label, "aria-label": mark.label,
        style: "left: " + ((mark.timestamp - start) / (total || 1)) * 100 + "%",
        onclick: () => seek(mark.timestamp - start, false),
      })));
    replayer.on("finish", () => { playing = false; show(); });
    seek(0, false);
    fit();
    document.body.dataset.loaded = "true";
  }

  playButton.addEventListener("click", () => seek(now() >= total ? 0 : now(), !playing));
  timeline.addEventListener("input", () => seek(Number(timeline.value), playing));
  speed.addEventListener("change", () => replayer && replayer.setConfig({ speed: Number(speed.value) }));
  skip.addEventListener("change", () => replayer && replayer.setConfig({ skipInactive: skip.checked }));
  window.addEventListener("resize", fit);
  new ResizeObserver(fit).observe(root);
  window.addEventListener("message", (event) => {
    if (event.source !== window.parent || event.origin !== location.origin) return;
    if (!event.data || typeof event.data !== "object") return;
    if (event.data.type === "svc-replay:load" && Array.isArray(event.data.events)) load(event.data.events, event.data.marks);
    // A moment as the page showed it: with what the same task drew (rrweb records a change once
    // the task that made it is over, a little after a console call in it).
    if (event.data.type === "svc-replay:seek" && typeof event.data.timestamp === "number") seek(event.data.timestamp - start + SETTLE_MS, false);
  });
  requestAnimationFrame(tick);
  window.parent.postMessage({ type: "svc-replay:ready" }, location.origin);
})();
