// svc's replay recorder (docs/replay.md). Served at /widget-replay.js after rrweb's recorder,
// which it is given; loaded by the widget only when the project records replays. It keeps the
// last `seconds` of the page as rrweb events, in memory only, and hands them to the widget when
// a report is sent: nothing leaves the page otherwise.
function startSvcReplay(rrwebRecord) {
  "use strict";
  const MAX_COMPRESSED = 2 * 1024 * 1024;
  // Each segment starts with a full snapshot (rrweb's checkout), so playing can begin at any
  // segment; the oldest goes once the next one alone covers the window.
  let segments = [];
  let seconds = 60;
  let stopRecording = null;

  function emit(event, isCheckout) {
    if (isCheckout || !segments.length) segments.push([]);
    segments[segments.length - 1].push(event);
    const windowStart = Date.now() - seconds * 1000;
    while (segments.length > 1 && segments[1][0].timestamp <= windowStart) segments.shift();
  }

  async function gzip(text) {
    const stream = new Blob([text]).stream().pipeThrough(new CompressionStream("gzip"));
    return new Response(stream).blob();
  }

  const api = {
    start(options) {
      if (stopRecording) return;
      seconds = Math.min(300, Math.max(10, Number(options && options.seconds) || 60));
      stopRecording = rrwebRecord.record({
        emit,
        checkoutEveryNms: seconds * 500,
        // Every field's value, passwords always (also once a "show password" button made one a
        // text field); the text of [data-svc-mask]; nothing of [data-svc-block] nor the widget.
        maskAllInputs: true,
        maskInputOptions: { password: true },
        maskTextSelector: "[data-svc-mask]",
        blockSelector: "[data-svc-block], [data-svc-widget]",
        slimDOMOptions: { script: true, comment: true, headFavicon: true, headWhitespace: true,
          headMetaSocial: true, headMetaRobots: true, headMetaHttpEquiv: true, headMetaVerification: true },
        recordCanvas: false,
        collectFonts: false,
        sampling: { mousemove: 100, scroll: 150, input: "last" },
      }) || null;
    },
    // The window's events, gzipped, at most MAX_COMPRESSED (the oldest segments go first);
    // null when even the newest segment alone is larger.
    async take() {
      for (;;) {
        const blob = await gzip(JSON.stringify(segments.flat()));
        if (blob.size <= MAX_COMPRESSED) return segments.length ? blob : null;
        if (segments.length <= 1) return null;
        segments.shift();
      }
    },
    stop() {
      if (stopRecording) stopRecording();
      stopRecording = null;
      segments = [];
    },
    size: () => segments.reduce((count, segment) => count + segment.length, 0),
    events: () => segments.flat(),
  };
  document.dispatchEvent(new CustomEvent("svc:replay-ready", { detail: api }));
}
