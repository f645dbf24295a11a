import { existsSync } from 'node:fs'
import { freePort } from '@cas/db'

/**
 * Postgres and Kafka from Testcontainers, used by the global setup instead of the embedded server and
 * the jar-run broker when a Docker engine is reachable (never the case on our own machines, which have
 * no engine; there the embedded path runs). TESTCONTAINERS=false turns it off.
 */
export async function dockerEngineReachable(): Promise<boolean> {
  if (process.env.TESTCONTAINERS === 'false') return false
  if (!process.env.DOCKER_HOST && !existsSync('/var/run/docker.sock')) return false
  try {
    const { getContainerRuntimeClient } = await import('testcontainers')
    await getContainerRuntimeClient()
    return true
  } catch {
    return false
  }
}

export interface Started {
  readonly stop: () => Promise<void>
}

export async function startPostgresContainer(): Promise<Started & { url: string }> {
  const { GenericContainer, Wait } = await import('testcontainers')
  const container = await new GenericContainer('postgres:17')
    .withEnvironment({ POSTGRES_PASSWORD: 'postgres' })
    .withCommand(['postgres', '-c', 'fsync=off', '-c', 'max_connections=300'])
    .withExposedPorts(5432)
    .withWaitStrategy(Wait.forLogMessage(/database system is ready to accept connections/, 2))
    .start()
  return {
    url: `postgres://postgres:postgres@${container.getHost()}:${container.getMappedPort(5432)}/postgres`,
    stop: async () => {
      await container.stop()
    },
  }
}

export async function startKafkaContainer(version: string): Promise<Started & { brokers: string[] }> {
  const { GenericContainer, Wait } = await import('testcontainers')
  // The broker must advertise the address the tests reach it on, so the host port is chosen up front.
  const hostPort = await freePort()
  const container = await new GenericContainer(`apache/kafka:${version}`)
    .withExposedPorts({ container: 9092, host: hostPort })
    .withEnvironment({
      KAFKA_NODE_ID: '1',
      KAFKA_PROCESS_ROLES: 'broker,controller',
      KAFKA_LISTENERS: 'PLAINTEXT://:9092,CONTROLLER://:9093',
      KAFKA_ADVERTISED_LISTENERS: `PLAINTEXT://127.0.0.1:${hostPort}`,
      KAFKA_CONTROLLER_LISTENER_NAMES: 'CONTROLLER',
      KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
      KAFKA_CONTROLLER_QUORUM_VOTERS: '1@localhost:9093',
      KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: '1',
      KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR: '1',
      KAFKA_TRANSACTION_STATE_LOG_MIN_ISR: '1',
      KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS: '0',
      KAFKA_AUTO_CREATE_TOPICS_ENABLE: 'false',
    })
    .withWaitStrategy(Wait.forLogMessage(/Kafka Server started/))
    .start()
  return {
    brokers: [`127.0.0.1:${hostPort}`],
    stop: async () => {
      await container.stop()
    },
  }
}
