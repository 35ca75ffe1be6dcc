// The part of autocannon 9's API the benches use (the package ships no types).
declare module 'autocannon' {
  interface Options {
    url: string
    connections?: number
    duration?: number
  }
  interface Result {
    requests: { average: number; p50: number; p99: number }
    latency: { p50: number; p99: number }
    non2xx: number
    errors: number
  }
  function autocannon(opts: Options): Promise<Result>
  export default autocannon
}
