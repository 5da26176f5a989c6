package dev.fencing.jpa;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.ManyToOne;
import jakarta.persistence.Table;
import org.hibernate.annotations.OnDelete;
import org.hibernate.annotations.OnDeleteAction;
import org.jspecify.annotations.Nullable;

/** Fenced with its {@link Crate}'s resource: the database deletes it with its crate. */
@Entity
@Table(name = "leash")
@Fenced("pups")
public class Leash {
  @Id String id = "";

  @ManyToOne
  @OnDelete(action = OnDeleteAction.CASCADE)
  @Nullable Crate crate;

  protected Leash() {}

  Leash(String id, Crate crate) {
    this.id = id;
    this.crate = crate;
  }
}
