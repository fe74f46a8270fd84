import { defineBackground } from 'wxt/utils/define-background';

export default defineBackground(() => {
  // Wired in the vault / signer issue; keys live only here.
});
