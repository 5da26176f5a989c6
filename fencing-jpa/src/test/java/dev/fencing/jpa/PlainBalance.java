package dev.fencing.jpa;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** {@link LedgerBalance} without {@code @Fenced}. */
@Entity
@Table(name = "plain_balance")
public class PlainBalance {
  @Id long id;

  long balance;

  protected PlainBalance() {}

  PlainBalance(long id) {
    this.id = id;
  }
}
