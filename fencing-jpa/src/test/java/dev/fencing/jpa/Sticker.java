package dev.fencing.jpa;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.SecondaryTable;
import jakarta.persistence.Table;
import org.hibernate.annotations.SecondaryRow;
import org.jspecify.annotations.Nullable;

/**
 * One resource per row ({@code sticker:<id>}) over a primary table and an optional secondary one:
 * Hibernate writes no {@code sticker_note} row while {@code note} is null.
 */
@Entity
@Table(name = "sticker")
@SecondaryTable(name = "sticker_note")
@SecondaryRow(table = "sticker_note", optional = true)
@Fenced(prefix = "sticker:", attribute = "id")
public class Sticker {
  @Id String id = "";

  long size;

  @Column(table = "sticker_note")
  @Nullable String note;

  protected Sticker() {}

  Sticker(String id, @Nullable String note) {
    this.id = id;
    this.note = note;
  }
}
