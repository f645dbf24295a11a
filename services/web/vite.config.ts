import { fileURLToPath } from 'node:url'
import react from '@vitejs/plugin-react'
import { defineConfig } from 'vite'

const root = fileURLToPath(new URL('.', import.meta.url))

/**
 * The dashboard builds into dist/web (beside the services' bundles), which the query service (and so the
 * all-in-one) serves. `npm run dev -w @cas/web` serves it with hot reload and sends /api to a running
 * `npm start` (start that with ALLOWED_ORIGINS=http://localhost:5173, see docs/dashboard.md).
 */
export default defineConfig({
  root,
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('../../dist/web', import.meta.url)),
    emptyOutDir: true,
    sourcemap: true,
    // Hashed file names under assets/: the server marks them immutable.
    assetsDir: 'assets',
    chunkSizeWarningLimit: 600,
  },
  server: {
    port: 5173,
    strictPort: true,
    proxy: { '/api': { target: process.env.API_URL ?? 'http://127.0.0.1:3000', changeOrigin: true } },
  },
})
