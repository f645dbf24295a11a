import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { createHttpApp } from '@cas/http'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { builtDashboardDir, DASHBOARD_CSP, isPagePath, registerDashboard } from './dashboard.ts'

const INDEX = '<!doctype html><title>dashboard</title><div id="root"></div>'
const SCRIPT = 'console.log("app")'

describe('serving the built dashboard', () => {
  let root: string
  let app: FastifyInstance
  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'cas-dashboard-'))
    await mkdir(path.join(root, 'assets'))
    await writeFile(path.join(root, 'index.html'), INDEX)
    await writeFile(path.join(root, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>')
    await writeFile(path.join(root, 'assets', 'index-AbC123.js'), SCRIPT)
    app = await createHttpApp({ logger: false, readiness: [] })
    app.get('/api/v1/things', async () => ({ ok: true }))
    await registerDashboard(app, { root })
  })
  afterAll(async () => {
    await app.close()
    await rm(root, { recursive: true, force: true })
  })

  it('answers the base URL with the app, revalidated on every load, under a strict CSP', async () => {
    const res = await app.inject('/')
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toMatch(/^text\/html/)
    expect(res.body).toBe(INDEX)
    expect(res.headers['cache-control']).toBe('no-cache')
    expect(res.headers.etag).toBeTruthy()
    expect(res.headers['content-security-policy']).toBe(DASHBOARD_CSP)
    expect(res.headers['x-frame-options']).toBe('DENY')
    expect(res.headers['x-content-type-options']).toBe('nosniff')
  })

  it('answers every page path with the app, so links and reloads land in it', async () => {
    for (const url of [
      '/chatbots',
      '/chatbots/1f0c-…',
      '/conversations/abc?sentiment=negative',
      '/login?next=%2F',
    ]) {
      const res = await app.inject(url)
      expect(res.statusCode, url).toBe(200)
      expect(res.body, url).toBe(INDEX)
      expect(res.headers['cache-control'], url).toBe('no-cache')
      expect(res.headers['content-security-policy'], url).toBe(DASHBOARD_CSP)
    }
    const head = await app.inject({ method: 'HEAD', url: '/analytics' })
    expect(head.statusCode).toBe(200)
    expect(head.body).toBe('')
  })

  it('serves hashed assets as immutable and other files revalidated', async () => {
    const asset = await app.inject('/assets/index-AbC123.js')
    expect(asset.statusCode).toBe(200)
    expect(asset.body).toBe(SCRIPT)
    expect(asset.headers['content-type']).toMatch(/javascript/)
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable')
    expect(asset.headers['content-security-policy']).toBeUndefined()
    const icon = await app.inject('/favicon.svg')
    expect(icon.statusCode).toBe(200)
    expect(icon.headers['cache-control']).toBe('no-cache')
    const again = await app.inject({
      url: '/',
      headers: { 'if-none-match': String((await app.inject('/')).headers.etag) },
    })
    expect(again.statusCode).toBe(304)
  })

  it('keeps the API JSON 404 for unknown API routes, missing files and other methods', async () => {
    for (const url of [
      '/api/v1/nothing-here',
      '/api',
      '/assets/index-gone.js',
      '/robots.txt',
      '/..%2f..%2fetc%2fpasswd',
    ]) {
      const res = await app.inject(url)
      expect(res.statusCode, url).toBe(404)
      expect(res.json(), url).toMatchObject({ ok: false, error: { code: 'not_found' } })
    }
    const post = await app.inject({ method: 'POST', url: '/chatbots', payload: {} })
    expect(post.statusCode).toBe(404)
    expect(post.json()).toMatchObject({ ok: false, error: { code: 'not_found' } })
  })

  // A build while the service ran left the dashboard blank: the new index.html was served, its new assets
  // were 404 (the static server routed only the files present at start).
  it('serves the assets of a build made while it runs, beside its index.html', async () => {
    const rebuilt = '<!doctype html><title>rebuilt</title><script src="/assets/index-New456.js"></script>'
    await writeFile(path.join(root, 'assets', 'index-New456.js'), 'console.log("new")')
    await writeFile(path.join(root, 'index.html'), rebuilt)
    await rm(path.join(root, 'assets', 'index-AbC123.js'))
    try {
      expect((await app.inject('/chatbots')).body).toBe(rebuilt)
      const asset = await app.inject('/assets/index-New456.js')
      expect(asset.statusCode).toBe(200)
      expect(asset.body).toBe('console.log("new")')
      expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable')
      const gone = await app.inject('/assets/index-AbC123.js')
      expect(gone.statusCode).toBe(404)
      expect(gone.json()).toMatchObject({ ok: false, error: { code: 'not_found' } })
    } finally {
      await writeFile(path.join(root, 'index.html'), INDEX)
      await writeFile(path.join(root, 'assets', 'index-AbC123.js'), SCRIPT)
      await rm(path.join(root, 'assets', 'index-New456.js'))
    }
  })

  it('serves nothing outside the build, nor its hidden files', async () => {
    const secret = path.join(path.dirname(root), `${path.basename(root)}-secret.txt`)
    await writeFile(secret, 'outside the build')
    await writeFile(path.join(root, '.env'), 'A_HIDDEN_FILE=1')
    try {
      for (const url of [
        `/assets/..%2f..%2f${path.basename(secret)}`,
        `/assets/%2e%2e/%2e%2e/${path.basename(secret)}`,
        `/..%2f${path.basename(secret)}`,
        '/assets/..%5c..%5cindex.html',
        '/.env',
        '/assets//index-AbC123.js',
      ]) {
        const res = await app.inject(url)
        expect(res.statusCode, url).toBe(404)
        expect(res.json(), url).toMatchObject({ ok: false, error: { code: 'not_found' } })
        expect(res.body, url).not.toMatch(/outside the build|A_HIDDEN_FILE/)
      }
    } finally {
      await rm(secret)
      await rm(path.join(root, '.env'))
    }
  })

  it('leaves API routes to their handlers', async () => {
    const res = await app.inject('/api/v1/things')
    expect(res.json()).toEqual({ ok: true })
    expect((await app.inject('/healthz')).json()).toEqual({ ok: true })
  })
})

describe('isPagePath', () => {
  it('is true for app paths and false for the API and file names', () => {
    expect(isPagePath('/')).toBe(true)
    expect(isPagePath('/chatbots/abc?x=1.2')).toBe(true)
    expect(isPagePath('/api/v1/chatbots')).toBe(false)
    expect(isPagePath('/api')).toBe(false)
    expect(isPagePath('/apiary')).toBe(true)
    expect(isPagePath('/assets/app.js')).toBe(false)
    expect(isPagePath('/favicon.ico?v=1')).toBe(false)
  })
})

describe('builtDashboardDir', () => {
  it('finds dist/web beside a bundle, and warns when it was not built', async () => {
    const dist = await mkdtemp(path.join(os.tmpdir(), 'cas-dist-'))
    try {
      const bundle = pathToFileURL(path.join(dist, 'query.js')).href
      const warnings: string[] = []
      expect(builtDashboardDir(bundle, (m) => warnings.push(m))).toBeUndefined()
      expect(warnings).toEqual([expect.stringContaining('npm run build')])
      await mkdir(path.join(dist, 'web'))
      await writeFile(path.join(dist, 'web', 'index.html'), INDEX)
      expect(builtDashboardDir(bundle, (m) => warnings.push(m))).toBe(path.join(dist, 'web') + path.sep)
      expect(warnings).toHaveLength(1)
    } finally {
      await rm(dist, { recursive: true, force: true })
    }
  })
})
