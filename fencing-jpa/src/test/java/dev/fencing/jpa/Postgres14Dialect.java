package dev.fencing.jpa;

import org.hibernate.dialect.DatabaseVersion;
import org.hibernate.dialect.PostgreSQLDialect;

/**
 * Hibernate's dialect for PostgreSQL 14, whatever server it talks to: before 15 there is no {@code
 * MERGE}, and Hibernate writes an optional secondary table's row with an {@code UPDATE} followed,
 * when no row was there, by an {@code INSERT}.
 */
public class Postgres14Dialect extends PostgreSQLDialect {
  /** Called by Hibernate ({@code hibernate.dialect}). */
  public Postgres14Dialect() {
    super(DatabaseVersion.make(14));
  }
}
