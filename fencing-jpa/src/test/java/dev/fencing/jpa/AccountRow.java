package dev.fencing.jpa;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/**
 * The {@code account} table of {@link Account}, mapped without {@code @Fenced} in another {@code
 * SessionFactory} (a read model, a reporting module): its writes are not announced, so the data
 * source, where fencing-jpa declared the table per-row, refuses them.
 */
@Entity
@Table(name = "account")
public class AccountRow {
  @Id long id;

  long number;

  long balance;

  protected AccountRow() {}
}
