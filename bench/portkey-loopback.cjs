// Preloaded into Portkey's gateway for the benchmark: its server listens on every interface by
// default and has no host flag, so bind any listen() without a host to 127.0.0.1 instead.
const net = require('node:net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function patchedListen(...args) {
  if (typeof args[0] === 'number' && typeof args[1] !== 'string') args.splice(1, 0, '127.0.0.1');
  else if (args[0] !== null && typeof args[0] === 'object' && args[0].host === undefined && args[0].path === undefined) args[0] = { ...args[0], host: '127.0.0.1' };
  return listen.apply(this, args);
};
