// Preloaded into server-everything (`node --require loopback.cjs …`): its
// HTTP server listens on the PORT it is given on every interface; this makes
// it listen on 127.0.0.1 only, and print `PORT n` once it listens, so the
// panel can give it port 0.
const net = require("node:net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === "number" || typeof args[0] === "string") {
    const port = Number(args[0]);
    const done = args.find((a) => typeof a === "function");
    return listen.call(this, port, "127.0.0.1", () => {
      process.stdout.write(`PORT ${this.address().port}\n`);
      if (done) done();
    });
  }
  return listen.apply(this, args);
};
