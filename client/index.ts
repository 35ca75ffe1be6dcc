/** Chimera's client SDK: the public API is exactly what this file exports. */
export { createHttpClient, type HttpClient, type HttpClientOptions, type paths } from './http.ts'
