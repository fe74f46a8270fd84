/** Order-book exchange protocol: L1/L2 auth, V2 orders, amounts, answer classification. */
export * from './auth';
export * from './amounts';
export * from './order';
export * from './errors';
export * from './client';
