// A second factor (docs/identity.md): the sign-in step that asks for one after the password,
// and the account page's panel to enrol and remove them. Passkeys go through the browser's own
// WebAuthn JSON helpers; svc's API speaks WebAuthn's JSON as it is.

import { api } from "../api.js";
import { actionButton, confirmDialog, copyButton, field, form, formatTime, h, plural, replaceContent } from "../dom.js";

function codeInput(name = "code") {
  return h("input", {
    name, type: "text", inputmode: name === "code" ? "numeric" : "text", required: true,
    autocomplete: "one-time-code", maxlength: name === "code" ? 6 : 19,
  });
}

export async function passkeyFromBrowser(publicKey, create = false) {
  const credential = create
    ? await navigator.credentials.create({ publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(publicKey) })
    : await navigator.credentials.get({ publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(publicKey) });
  return credential.toJSON();
}

// Recovery codes are shown once: the user keeps them, then goes on.
export function recoveryCodesNotice(codes, onDone) {
  return h("div", { class: "recovery-codes", "aria-label": "Recovery codes" },
    h("h2", {}, "Your recovery codes"),
    h("p", {}, "Each works once in place of a code, e.g. when your phone is lost. Keep them somewhere safe: they are not shown again."),
    h("ol", {}, codes.map((code) => h("li", {}, h("code", {}, code)))),
    copyButton(() => codes.join("\n"), "recovery codes"),
    onDone ? h("button", { type: "button", onclick: onDone }, "I have saved them") : null);
}

function totpSetup(setup) {
  return h("div", { class: "totp-setup" },
    h("img", { src: setup.qrCode, alt: "QR code for your authenticator app", width: 200, height: 200 }),
    h("p", {}, "Or type this key into the app: ", h("code", { class: "totp-secret" }, setup.secret)));
}

// `destination`: where the sign-in page was heading (auth.js checks it is a page of this site).
export function secondFactorStep(waiting, context, destination) {
  const done = (user) => {
    const go = () => {
      context.signedIn(user);
      context.navigate(destination, { replace: true });
    };
    if (user.recoveryCodes) replaceContent(step, recoveryCodesNotice(user.recoveryCodes, go));
    else go();
  };
  const answer = (body) => api.post("/auth/second-factor", body).then(done);
  const codeForm = form({ "aria-label": "Second factor" }, [
    field("Code from your authenticator app", codeInput()),
    h("button", { type: "submit" }, "Verify"),
  ], (values) => answer({ code: values.code.trim() }));
  const recoveryForm = form({ "aria-label": "Recovery code", hidden: true }, [
    field("Recovery code", codeInput("recovery_code")),
    h("button", { type: "submit" }, "Use recovery code"),
  ], (values) => answer({ recovery_code: values.recovery_code.trim() }));
  const step = h("div", { class: "second-factor" }, h("h1", {}, "Second factor"));
  if (waiting.enrol) {
    const setupSlot = h("div", {});
    api.post("/auth/second-factor/enrolment").then((setup) => replaceContent(setupSlot, totpSetup(setup)));
    step.append(
      h("p", {}, "This svc asks everyone to use a second factor. Scan the QR code with an authenticator app, then type the code it shows."),
      setupSlot, codeForm);
    return step;
  }
  step.append(h("p", {}, "Your account has a second factor. Sign-in finishes once it checks out (within 5 minutes)."));
  if (waiting.methods.includes("passkey")) {
    step.append(actionButton("Use a passkey", async () => {
      const options = await api.post("/auth/second-factor/passkey-options");
      await answer({ credential: await passkeyFromBrowser(options.publicKey) });
    }, { class: "primary" }));
  }
  if (waiting.methods.includes("totp")) step.append(codeForm);
  step.append(recoveryForm, h("p", {}, h("button", {
    type: "button", class: "link",
    onclick: () => { recoveryForm.hidden = false; recoveryForm.querySelector("input").focus(); },
  }, "Use a recovery code")));
  return step;
}

// The account page's "Sign-in security" panel.
export function securityPanel(security) {
  const panel = h("section", { class: "panel", "aria-label": "Sign-in security" });
  const reload = async () => show(await api.get("/auth/security"));
  // Every change here needs the account's owner: their password, or a current code (svc
  // tries the one value as either).
  const proofInput = h("input", { name: "proof", type: "password", autocomplete: "current-password", maxlength: 128 });
  const proof = () => ({ current_password: proofInput.value, current_code: proofInput.value.trim().slice(0, 40) });
  const show = (current) => replaceContent(panel,
    h("h2", {}, "Sign-in security"),
    h("p", {}, `You sign in with ${current.signInMethods.map((m) => (m === "oidc" ? "single sign-on" : "your password")).join(" or ")}.`
      + (current.secondFactorRequired ? " This svc requires a second factor for password sign-ins." : "")),
    current.factors.length
      ? h("ul", { class: "factors" }, current.factors.map((factor) => h("li", {},
        h("span", {}, factorName(factor)),
        h("small", {}, factor.lastUsedAt ? `last used ${formatTime(factor.lastUsedAt)}` : `added ${formatTime(factor.createdAt)}`),
        actionButton("Remove", async () => {
          if (!await confirmDialog(`Remove ${factor.name}?`, "Remove")) return;
          await api.delete(`/auth/factors/${factor.id}`, proof());
          await reload();
        }, { "aria-label": `Remove ${factor.name}` }))))
      : h("p", { class: "empty" }, "No second factor yet: a password alone signs in."),
    current.factors.length ? h("p", {}, `${plural(current.recoveryCodesLeft, "recovery code")} left.`) : null,
    current.signInMethods.includes("password") || current.factors.length
      ? field("Current password or code", proofInput,
        "Needed to add or remove a factor or make new recovery codes: your password, or a code from your authenticator app.")
      : null,
    h("div", { class: "actions" },
      actionButton("Add an authenticator app", () => addApp(panel, reload, proof)),
      actionButton("Add a passkey", () => addPasskey(panel, reload, proof)),
      current.factors.length ? actionButton("New recovery codes", async () => {
        const { recoveryCodes } = await api.post("/auth/recovery-codes", proof());
        panel.append(recoveryCodesNotice(recoveryCodes));
      }) : null));
  show(security);
  return panel;
}

// A factor's name, with its kind where the name does not say it ("Work laptop (passkey)").
function factorName(factor) {
  const kind = factor.kind === "totp" ? "authenticator app" : "passkey";
  return factor.name.toLowerCase().includes(kind) ? factor.name : `${factor.name} (${kind})`;
}

async function addApp(panel, reload, proof) {
  // One setup at a time: a second click shows the QR code already there, not a second one.
  const shown = panel.querySelector("form[aria-label='Confirm authenticator app']");
  if (shown) {
    shown.querySelector("input[name=code]").focus();
    return;
  }
  const setup = await api.post("/auth/factors/totp");
  const confirm = form({ "aria-label": "Confirm authenticator app" }, [
    totpSetup(setup),
    field("Code from the app", codeInput()),
    h("button", { type: "submit" }, "Confirm"),
  ], async (values) => {
    const factor = await api.post(`/auth/factors/${setup.id}/confirm`, { ...proof(), code: values.code.trim() });
    await reload();
    if (factor.recoveryCodes) panel.append(recoveryCodesNotice(factor.recoveryCodes));
  });
  panel.append(confirm);
  confirm.querySelector("input[name=code]").focus();
}

async function addPasskey(panel, reload, proof) {
  const options = await api.post("/auth/factors/passkey-options");
  const credential = await passkeyFromBrowser(options.publicKey, true);
  const factor = await api.post("/auth/factors/passkeys", { ...proof(), name: "Passkey", credential, ticket: options.ticket });
  await reload();
  if (factor.recoveryCodes) panel.append(recoveryCodesNotice(factor.recoveryCodes));
}
