export { BaseError, toWireError, type WireError } from './base';
