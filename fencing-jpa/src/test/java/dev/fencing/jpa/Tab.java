package dev.fencing.jpa;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.ManyToOne;
import jakarta.persistence.Table;
import org.hibernate.annotations.OnDelete;
import org.hibernate.annotations.OnDeleteAction;
import org.jspecify.annotations.Nullable;

/** One resource per row, deleted by the database with its {@link Crate}. */
@Entity
@Table(name = "tab")
@Fenced(prefix = "tab:", attribute = "owner")
public class Tab {
  @Id String id = "";

  String owner = "";

  @ManyToOne
  @OnDelete(action = OnDeleteAction.CASCADE)
  @Nullable Crate crate;

  protected Tab() {}

  Tab(String id, Crate crate) {
    this.id = id;
    this.crate = crate;
  }
}
