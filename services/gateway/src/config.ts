import type { GatewayEnv } from "@labelgate/config";
import type { GatewayConfig } from "./app";

/** The gateway's settings from its parsed environment (`adminToken` may come from elsewhere in standalone). */
export function gatewayConfigFromEnv(env: GatewayEnv, adminToken: string | undefined): GatewayConfig {
  return {
    adminToken,
    allowPrivateUrls: env.ALLOW_PRIVATE_URLS,
    webhookRetryMax: env.WEBHOOK_RETRY_MAX,
    claimTtlSeconds: env.CLAIM_TTL_SECONDS,
    sandboxLabelQuota: env.SANDBOX_LABEL_QUOTA,
    productionLabelQuota: env.PRODUCTION_LABEL_QUOTA,
    serviceName: "labelgate-gateway",
    trustProxy: env.TRUST_PROXY,
    evmRpcUrl: env.EVM_RPC_URL,
    billing: {
      currency: env.BILLING_CURRENCY,
      pricePerLabelCents: { sandbox: env.PRICE_PER_LABEL_CENTS_SANDBOX, production: env.PRICE_PER_LABEL_CENTS_PRODUCTION },
    },
    rateLimit: {
      perKey: { sandbox: env.RATE_LIMIT_SANDBOX, production: env.RATE_LIMIT_PRODUCTION },
      windowSeconds: env.RATE_LIMIT_WINDOW_SECONDS,
      registrationsPerHour: env.RATE_LIMIT_REGISTRATIONS_PER_HOUR,
      keyPrefix: env.QUEUE_PREFIX,
    },
  };
}
