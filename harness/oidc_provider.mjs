// A real OpenID provider for the tests: `oidc-provider` (the certified Node implementation,
// from npm) over HTTPS on 127.0.0.1, with its development login pages (any password; the login
// name is the account id). Its settings come as one JSON argument (harness/oidc.py):
// {cert, key, clients: [...], accounts: {id: {email, email_verified, name}}, jwks?}.
// It binds a port of the kernel's choice and prints `listening on <issuer>` (the issuer names
// that port). A line on its standard input, a JSON signing-key set, makes it answer with those
// keys from then on, on the same port (a provider that rotated its keys): `rotated` when done.
import { readFileSync } from "node:fs";
import https from "node:https";
import readline from "node:readline";
import Provider from "oidc-provider";

const settings = JSON.parse(process.argv[2]);

function provider(issuer, jwks) {
  return new Provider(issuer, {
    clients: settings.clients.map((client) => ({
      response_types: ["code"],
      grant_types: ["authorization_code"],
      token_endpoint_auth_method: "client_secret_basic",
      ...client,
    })),
    pkce: { required: () => true },
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
    cookies: { keys: ["svc tests only"] },
    // Signing keys of the tests' choosing (two providers can share one); else oidc-provider's own.
    ...(jwks ? { jwks } : {}),
    async findAccount(ctx, id) {
      const account = settings.accounts[id];
      if (!account) return undefined;
      return { accountId: id, async claims() { return { sub: id, ...account }; } };
    },
  });
}

const server = https.createServer({
  cert: readFileSync(settings.cert),
  key: readFileSync(settings.key),
});
let issuer;
server.listen(0, "127.0.0.1", () => {
  issuer = `https://127.0.0.1:${server.address().port}`;
  server.on("request", provider(issuer, settings.jwks).callback());
  console.log(`listening on ${issuer}`);
});

readline.createInterface({ input: process.stdin }).on("line", (line) => {
  server.removeAllListeners("request");
  server.on("request", provider(issuer, JSON.parse(line)).callback());
  console.log("rotated");
});
