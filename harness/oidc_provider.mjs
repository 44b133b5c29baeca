// A real OpenID provider for the tests: `oidc-provider` (the certified Node implementation,
// from npm) over HTTPS on 127.0.0.1, with its development login pages (any password; the login
// name is the account id). Its settings come as one JSON argument (harness/oidc.py):
// {port, issuer, cert, key, clients: [...], accounts: {id: {email, email_verified, name}},
// jwks?}.
import { readFileSync } from "node:fs";
import https from "node:https";
import Provider from "oidc-provider";

const settings = JSON.parse(process.argv[2]);

const provider = new Provider(settings.issuer, {
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
  ...(settings.jwks ? { jwks: settings.jwks } : {}),
  async findAccount(ctx, id) {
    const account = settings.accounts[id];
    if (!account) return undefined;
    return { accountId: id, async claims() { return { sub: id, ...account }; } };
  },
});

const server = https.createServer(
  { cert: readFileSync(settings.cert), key: readFileSync(settings.key) },
  provider.callback(),
);
server.listen(settings.port, "127.0.0.1", () => console.log(`listening on ${settings.issuer}`));
