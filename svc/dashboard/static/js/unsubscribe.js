// A reporter's unsubscribe page (docs/reporter-updates.md): opening it changes nothing (mail
// scanners open links); the button does, as a mail program's one-click POST to the same address
// does. Its words come from the page, in the reporter's language.
const said = document.getElementById("said");
const button = document.getElementById("stop");

button.addEventListener("click", async () => {
  const answer = await fetch(location.pathname, { method: "POST" }).catch(() => null);
  const body = answer && answer.ok ? await answer.json() : null;
  if (body) {
    // Filled in as text: the address and the project's name are nobody's markup.
    said.textContent = said.dataset.done.replace("{email}", body.email).replace("{project}", body.projectName);
    button.hidden = true;
  } else {
    said.textContent = answer && answer.status === 404 ? said.dataset.gone : said.dataset.failed;
  }
});
