export {
  chatbotsWithDestroyedKeys,
  DESTROYED,
  dataKeyFor,
  destroyDataKey,
  loadDataKeys,
  type StoredDataKey,
  unwrapStored,
} from './data-keys.ts'
export { KEY_BYTES, Keyring, openWith, sealWith } from './keyring.ts'
export { loadKeyring, MASTER_KEY_FILE, parseMasterKey } from './load.ts'
export { type OpenedRecord, openRecords, openStep, type SkipReason } from './open-records.ts'
export { sealEvents } from './seal-events.ts'
