/** Fixed secrets for tests: the suite and global setup must agree on the derived DB password. */
export const TEST_SECRET_KEY = 'test-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz';
export const TEST_ENCRYPTION_KEY = 'test-encryption-key-0123456789-abcdefghijklmnopqrstu';
export const TEST_METRICS_TOKEN = 'test-metrics-token-0123456789';
