/** Perps gateway protocol: commands, signing, envelope, verification, weights, errors. */
export * from './commands';
export * from './signing';
export * from './envelope';
export * from './verify';
export * from './errors';
export * from './reads';
export * from './client';
