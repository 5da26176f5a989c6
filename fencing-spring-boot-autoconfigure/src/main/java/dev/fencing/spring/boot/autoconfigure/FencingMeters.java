package dev.fencing.spring.boot.autoconfigure;

/**
 * Where fenced data sources report their meters; free of Micrometer types so that the data source
 * post-processor loads without Micrometer on the classpath.
 */
interface FencingMeters {
  /**
   * The registry for {@code FencedDataSource.Builder.meterRegistry}.
   *
   * @return a Micrometer {@code MeterRegistry}
   */
  Object registry();
}
