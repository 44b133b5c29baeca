// The status page's two actions (docs/reporter-updates.md): a reply and "Still happening?",
// through the JSON API with the page's own token; the page is read without any script.
const token = decodeURIComponent(location.pathname.split("/").pop());
const api = `/api/v1/status/${encodeURIComponent(token)}`;
const said = document.getElementById("said");

async function send(path, body) {
  const answer = await fetch(`${api}${path}`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  if (answer.ok) {
    location.reload();
    return;
  }
  const { detail } = await answer.json().catch(() => ({}));
  // A refused field's detail is {field: [messages]}.
  const words = typeof detail === "object" && detail ? Object.values(detail).flat().join(" ") : detail;
  said.textContent = words || said.dataset.failed;
}

document.getElementById("reply").addEventListener("submit", (event) => {
  event.preventDefault();
  const body = document.getElementById("reply-body").value;
  send("/replies", { body });
});

document.getElementById("reopen")?.addEventListener("click", () => send("/reopen", {}));
