package dev.fencing.jdbc;

import java.util.Objects;

/**
 * Tables whose writes need a token for a known resource, whatever statement writes them — a bulk
 * {@code UPDATE} or {@code DELETE}, a native query — declared by integrations when they start
 * (fencing-jpa declares the tables of every {@code @Fenced} entity). A {@link FencedDataSource}
 * connection refuses a statement whose SQL writes such a table (its {@code UPDATE}, {@code DELETE
 * FROM}, {@code INSERT INTO}, {@code MERGE INTO}, {@code TRUNCATE} or {@code COPY} target) with a
 * {@link MissingFencingTokenException} unless the writing thread has a token for the table's
 * resource bound; the transaction is rolled back and nothing of it is written.
 *
 * <p>A table whose rows name their resources one by one ({@link #requireRowResources}) cannot be
 * judged by the client for a statement that writes many rows: such a write is accepted only if the
 * table is protected ({@code fencing.protect_rows}, whose trigger judges every row), else refused.
 * An entity write announced with {@link #announceRowWrite} right before its statement is not such a
 * write. Declarations hold for the class loader's lifetime and every data source; a table declared
 * with several resources (entities sharing it) needs a token for each.
 */
public final class FencedTables {
  private FencedTables() {}

  /**
   * Every write to {@code table} needs a token for {@code resource} bound.
   *
   * @param table the table's name as the SQL names it, without schema (matched case-insensitively)
   * @throws IllegalArgumentException if {@code resource} is not a valid resource name
   */
  public static void requireToken(String table, String resource) {
    FencingToken.requireValidResource(Objects.requireNonNull(resource, "resource"));
    TableGuards.declare(table, resource);
  }

  /**
   * {@code table}'s rows name their resources one by one: a statement writing it that no {@link
   * #announceRowWrite} announced (a bulk or native query) is refused unless the table is protected.
   */
  public static void requireRowResources(String table) {
    TableGuards.declare(table, null);
  }

  /**
   * Announces, on the writing thread, that the next statement writing {@code table} writes one row
   * whose resource's token the caller has already required (fencing-jpa's entity events).
   */
  public static void announceRowWrite(String table) {
    TableGuards.announce(table);
  }
}
