// kafkajs's table of Kafka protocol errors (type, code, retriable, the message it logs), which kafka-log.ts
// reads its messages from; the package declares its error classes but not this module.
declare module 'kafkajs/src/protocol/error.js' {
  export const errorCodes: readonly {
    readonly type: string
    readonly code: number
    readonly retriable: boolean
    readonly message: string
  }[]
}
