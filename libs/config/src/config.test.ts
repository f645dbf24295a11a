import path from 'node:path'
import pg from 'pg'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { variable } from './group.ts'
import {
  ALL_GROUPS,
  analysis,
  ConfigError,
  defaultsOf,
  eventLog,
  loadConfig,
  parseConfig,
  relay,
  server,
  sessions,
  valuesOf,
} from './index.ts'
import { int } from './infrastructure.ts'

describe('loadConfig', () => {
  it('defaults to the embedded setup on port 3000', () => {
    const config = loadConfig({})
    expect(config).toMatchObject({ PORT: 3000, HOST: '127.0.0.1', KAFKA_PARTITIONS: 12 })
    expect(config.DATABASE_URL).toBeUndefined()
    expect(config.KAFKA_BROKERS).toBeUndefined()
    expect(config.DATA_DIR).toBe(path.resolve('.data'))
  })

  it('parses Kafka brokers and treats empty strings as unset', () => {
    const config = loadConfig({
      KAFKA_BROKERS: '127.0.0.1:9092, kafka-2:9093',
      DATABASE_URL: '',
      PORT: '8080',
    })
    expect(config.KAFKA_BROKERS).toEqual(['127.0.0.1:9092', 'kafka-2:9093'])
    expect(config.DATABASE_URL).toBeUndefined()
    expect(config.PORT).toBe(8080)
  })

  it("takes libpq's Unix-socket URL without a host, as pg reads it", () => {
    const config = loadConfig({
      DATABASE_URL: 'postgres://cas:secret@/analytics?host=/var/run/postgresql',
      QUERY_DATABASE_URL: 'postgresql://reader:pw@:5433/analytics?host=/tmp',
    })
    expect(config.DATABASE_URL).toBe('postgres://cas:secret@localhost/analytics?host=/var/run/postgresql')
    expect(config.QUERY_DATABASE_URL).toBe('postgresql://reader:pw@localhost:5433/analytics?host=/tmp')
    const client = new pg.Client({ connectionString: config.DATABASE_URL })
    expect({ host: client.host, database: client.database, user: client.user }).toEqual({
      host: '/var/run/postgresql',
      database: 'analytics',
      user: 'cas',
    })
    // A URL with a host is left as it is, and one that is no URL is still refused.
    expect(loadConfig({ DATABASE_URL: 'postgres://u:p@db.internal:5432/x' }).DATABASE_URL).toBe(
      'postgres://u:p@db.internal:5432/x',
    )
    expect(() => loadConfig({ DATABASE_URL: 'not a url' })).toThrow(ConfigError)
  })

  it('expires invitations after INVITATION_TTL_DAYS (7) and sends them by mail only with SMTP_URL', () => {
    expect(loadConfig({})).toMatchObject({ INVITATION_TTL_DAYS: 7, INVITATION_RATE_LIMIT_PER_HOUR: 30 })
    expect(loadConfig({}).SMTP_URL).toBeUndefined()
    expect(loadConfig({ SMTP_URL: 'smtps://u:p@mail.example.com:465' }).SMTP_URL).toBe(
      'smtps://u:p@mail.example.com:465',
    )
    expect(() => loadConfig({ SMTP_URL: 'https://mail.example.com' })).toThrow(/SMTP_URL/)
    expect(() => loadConfig({ INVITATION_TTL_DAYS: '0' })).toThrow(/INVITATION_TTL_DAYS/)
  })

  it('lets a crashed consumer go after KAFKA_SESSION_TIMEOUT_MS (30 s by default, at least 1 s)', () => {
    expect(loadConfig({}).KAFKA_SESSION_TIMEOUT_MS).toBe(30_000)
    expect(loadConfig({ KAFKA_SESSION_TIMEOUT_MS: '6000' }).KAFKA_SESSION_TIMEOUT_MS).toBe(6_000)
    expect(() => loadConfig({ KAFKA_SESSION_TIMEOUT_MS: '500' })).toThrow(/KAFKA_SESSION_TIMEOUT_MS/)
  })

  it('sizes the relay: RELAY_BATCH_SIZE events per batch (500), RELAY_MAX_IN_FLIGHT batches in flight (4)', () => {
    expect(loadConfig({})).toMatchObject({ RELAY_BATCH_SIZE: 500, RELAY_MAX_IN_FLIGHT: 4 })
    expect(loadConfig({ RELAY_BATCH_SIZE: '2000', RELAY_MAX_IN_FLIGHT: '1' })).toMatchObject({
      RELAY_BATCH_SIZE: 2_000,
      RELAY_MAX_IN_FLIGHT: 1,
    })
    expect(() => loadConfig({ RELAY_MAX_IN_FLIGHT: '0' })).toThrow(/RELAY_MAX_IN_FLIGHT/)
    expect(() => loadConfig({ RELAY_BATCH_SIZE: 'many' })).toThrow(/RELAY_BATCH_SIZE/)
  })

  it('names every bad variable', () => {
    try {
      loadConfig({ PORT: 'eighty', KAFKA_BROKERS: 'no-port', LOG_LEVEL: 'loud' })
      expect.unreachable()
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError)
      const issues = (err as ConfigError).issues.join('\n')
      expect(issues).toMatch(/PORT/)
      expect(issues).toMatch(/KAFKA_BROKERS/)
      expect(issues).toMatch(/LOG_LEVEL/)
    }
  })
})

describe('a service configuration', () => {
  it('parses only the groups it reads: a bad variable of another concern does not stop it', () => {
    const env = { RELAY_BATCH_SIZE: '2000', ANALYSIS_PROVIDER: 'telepathy' }
    const config = parseConfig([server, eventLog, relay], env)
    expect(config).toEqual({
      PORT: 3000,
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      KAFKA_BROKERS: undefined,
      KAFKA_SESSION_TIMEOUT_MS: 30_000,
      KAFKA_TOPIC_PREFIX: '',
      KAFKA_PARTITIONS: 12,
      KAFKA_REPLICATION_FACTOR: 1,
      KAFKA_CLIENT_ID: 'conversation-analytics',
      RELAY_BATCH_SIZE: 2_000,
      RELAY_MAX_IN_FLIGHT: 4,
    })
    expect(() => loadConfig(env)).toThrow(/ANALYSIS_PROVIDER/)
  })

  it("checks a group's combinations: the LLM analyzer needs its endpoint, key and model", () => {
    expect(() => parseConfig([analysis], { ANALYSIS_PROVIDER: 'llm', LLM_MODEL: 'm' })).toThrow(
      /LLM_BASE_URL: required when ANALYSIS_PROVIDER=llm\n\s+LLM_API_KEY: required/,
    )
  })

  it('refines signals with an LLM only when asked, and then needs its endpoint, key and model', () => {
    expect(parseConfig([analysis], {}).SIGNALS_LLM_REFINE).toBe('off')
    expect(() => parseConfig([analysis], { SIGNALS_LLM_REFINE: 'borderline', LLM_MODEL: 'm' })).toThrow(
      /LLM_BASE_URL: required when SIGNALS_LLM_REFINE=borderline\n\s+LLM_API_KEY: required/,
    )
    expect(() => parseConfig([analysis], { SIGNALS_LLM_REFINE: 'always' })).toThrow(/SIGNALS_LLM_REFINE/)
    const on = parseConfig([analysis], {
      SIGNALS_LLM_REFINE: 'borderline',
      LLM_BASE_URL: 'http://127.0.0.1:1/v1',
      LLM_API_KEY: 'k',
      LLM_MODEL: 'm',
    })
    expect(on.SIGNALS_LLM_REFINE).toBe('borderline')
  })

  it("hands a module one concern's values and nothing else", () => {
    expect(valuesOf(sessions, loadConfig({ SESSION_IDLE_MINUTES: '30' }))).toEqual({
      SESSION_SECRET: undefined,
      SESSION_IDLE_MINUTES: 30,
      SESSION_ABSOLUTE_HOURS: 336,
      ALLOWED_ORIGINS: [],
    })
  })

  it('documents every variable with a default and a one-line meaning, each in one group', () => {
    const names = ALL_GROUPS.flatMap((g) => Object.keys(g.variables))
    expect(new Set(names).size).toBe(names.length)
    for (const g of ALL_GROUPS) {
      for (const [name, v] of Object.entries(g.variables)) {
        expect(v.default, name).not.toBe('')
        expect(v.meaning, name).not.toMatch(/\n/)
      }
    }
  })

  it("states each default once, in the schema: the table's default is the schema's", () => {
    const v = variable(int(1, 100).default(42), { meaning: 'x' })
    expect(v.default).toBe('42')
    expect(variable(z.string().optional(), { meaning: 'x' }).default).toBe('unset')
    expect(variable(z.string().optional(), { absent: 'generated', meaning: 'x' }).default).toBe('generated')
    expect(() => variable(int(1, 100).default(42), { absent: 'generated', meaning: 'x' })).toThrow()
    expect(defaultsOf(relay)).toEqual({ RELAY_BATCH_SIZE: 500, RELAY_MAX_IN_FLIGHT: 4 })
    expect(defaultsOf(analysis).ANALYSIS_MAX_TOPICS).toBe(
      Number(analysis.variables.ANALYSIS_MAX_TOPICS.default),
    )
  })
})
