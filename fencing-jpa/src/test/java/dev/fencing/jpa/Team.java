package dev.fencing.jpa;

import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.JoinTable;
import jakarta.persistence.ManyToMany;
import jakarta.persistence.Table;
import java.util.HashSet;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/** Owns a many-to-many join table; its members ({@link Person}) are not fenced. */
@Entity
@Table(name = "team")
@Fenced("teams")
public class Team {
  @Id
  @GeneratedValue(strategy = GenerationType.SEQUENCE)
  @Nullable Long id;

  String name = "";

  @ManyToMany
  @JoinTable(name = "team_member")
  Set<Person> members = new HashSet<>();

  protected Team() {}

  Team(String name) {
    this.name = name;
  }
}
