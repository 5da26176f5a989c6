package dev.fencing.jpa;

import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import org.jspecify.annotations.Nullable;

/** {@link IdentityEntry} without {@code @Fenced}: the same IDENTITY insert, unfenced. */
@Entity
@Table(name = "plain_identity_entry")
public class PlainIdentityEntry {
  @Id
  @GeneratedValue(strategy = GenerationType.IDENTITY)
  @Nullable Long id;

  String text = "";

  protected PlainIdentityEntry() {}

  PlainIdentityEntry(String text) {
    this.text = text;
  }
}
