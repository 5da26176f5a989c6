package dev.fencing.jpa;

import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import org.jspecify.annotations.Nullable;

/** IDENTITY ids: Hibernate inserts inside {@code persist()}, not at the flush. */
@Entity
@Table(name = "identity_entry")
@Fenced("ledger")
public class IdentityEntry {
  @Id
  @GeneratedValue(strategy = GenerationType.IDENTITY)
  @Nullable Long id;

  String text = "";

  protected IdentityEntry() {}

  IdentityEntry(String text) {
    this.text = text;
  }
}
